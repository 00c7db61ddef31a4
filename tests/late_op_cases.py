"""Sample calls (test_ops_table.CASES) of the late op families (``ops.registry.LATE_FAMILIES``: the
activations, losses and norms ``torch.nn`` loads on first use), through the public functions."""
from __future__ import annotations


def late_cases(torch, F, case):
    from gradexpr.nn.weight_norms import _weight_norm_of
    def inplace(f):
        return lambda a: f(a * 1)

    def rrelu_train(a):
        torch.manual_seed(0)            # the same slopes on every evaluation
        return F.rrelu(a, 0.1, 0.3, training=True)

    def rrelu_train_inplace(a):
        torch.manual_seed(0)
        return F.rrelu(a * 1, 0.1, 0.3, training=True, inplace=True)

    sign = torch.tensor([[1.0, -1.0, -1.0], [1.0, 1.0, -1.0]], dtype=torch.float64)

    def soft_margin_backward(reduction):
        """soft_margin_loss's gradient as a function of (input, grad_output), taken with create_graph:
        it records the fused soft_margin_loss_backward, differentiated again by the checks."""
        def call(x, g):
            with torch.enable_grad():
                x = x if x.requires_grad else x.detach().requires_grad_()
                loss = F.soft_margin_loss(x, sign, reduction=reduction)
                return torch.autograd.grad(loss, x, g, create_graph=True)[0]
        return call
    classes = torch.tensor([1, 0])
    label_sets = torch.tensor([[1, -1, 0], [2, 0, -1]])
    pairs = torch.tensor([1, -1])

    return {
        # losses (ops/nn_losses.py)
        "soft_margin_loss": [case(lambda a: F.soft_margin_loss(a, sign), (2, 3)),
                             case(lambda a: F.soft_margin_loss(a, sign, reduction="none"), (2, 3))],
        "soft_margin_loss_backward": [case(soft_margin_backward("mean"), (2, 3), ()),
                                      case(soft_margin_backward("none"), (2, 3), (2, 3))],
        "multi_margin_loss": [case(lambda a: F.multi_margin_loss(a, classes), (2, 3), twice=False),
                              case(lambda a: F.multi_margin_loss(a, classes, p=2, margin=3.0, reduction="none"),
                                   (2, 3), twice=False)],
        "multilabel_margin_loss": [case(lambda a: F.multilabel_margin_loss(a, label_sets), (2, 3), twice=False),
                                   case(lambda a: F.multilabel_margin_loss(a, label_sets, reduction="none"), (2, 3),
                                        twice=False)],
        "add_scalar": [case(lambda a, b: F.margin_ranking_loss(a, b, sign, margin=5.0), (2, 3), (2, 3))],
        "sub_scalar": [case(lambda a, b: F.cosine_embedding_loss(a, b, pairs, margin=-2.0), (2, 3), (2, 3))],
        "norm_dim": [case(lambda a, b: F.pairwise_distance(a, b), (2, 3), (2, 3)),
                     case(lambda a, b: F.pairwise_distance(a, b, p=3.0, keepdim=True), (2, 3), (2, 3))],
        # norms (ops/nn_norms.py)
        "native_group_norm": [case(lambda a, w, b: F.group_norm(a, 2, w, b), (3, 4, 2), (4,), (4,)),
                              case(lambda a, w, b: F.group_norm(a, 1, w, b, eps=0.1), (2, 3), (3,), (3,))],
        # group norm's node for its three outputs (the mean and rstd read back by its formula)
        "native_group_norm_outputs": [case(lambda a, w, b: F.group_norm(a, 2, w, b), (3, 4, 2), (4,), (4,)),
                                      case(lambda a, w, b: F.group_norm(a, 1, w, b, eps=0.1), (2, 3), (3,), (3,))],
        "native_group_norm_nobias_outputs": [case(lambda a: F.group_norm(a, 3), (2, 6, 2))],
        "fractional_max_pool2d": [case(lambda x: F.fractional_max_pool2d(x, 2, output_size=(3, 2),
                                                                          _random_samples=torch.tensor([[[0.3, 0.7]]], dtype=x.dtype)),
                                       (1, 1, 5, 4))],
        "fractional_max_pool3d": [case(lambda x: F.fractional_max_pool3d(x, 2, output_size=2,
                                                                          _random_samples=torch.tensor([[[0.2, 0.5, 0.9]]], dtype=x.dtype)),
                                       (1, 1, 4, 4, 5))],
        # CTC: PyTorch's gradient is the one through log_softmax (its formula is for normalised log_probs)
        "ctc_loss": [case(lambda x: F.ctc_loss(x.log_softmax(2), torch.tensor([[1, 2], [3, 3]]), [5, 4], [2, 2],
                                               reduction="none"), (5, 2, 4)),
                     case(lambda x: F.ctc_loss(x.log_softmax(1), torch.tensor([2, 1, 2]), [6], [3]), (6, 3))],
        # nn.utils.weight_norm's fused kernel (dim 0 and the last dim)
        "weight_norm_interface": [case(lambda v, g: _weight_norm_of(v, g, 0), (3, 4), (3, 1)),
                                  case(lambda v, g: _weight_norm_of(v, g, 2), (2, 3, 2), (1, 1, 2))],
        "native_group_norm_nobias": [case(lambda a: F.group_norm(a, 3), (2, 6, 2)),
                                     case(lambda a: torch.nn.GroupNorm(2, 4, affine=False)(a), (2, 4, 3))],
        # activations (ops/nn_activations.py)
        "celu": [case(lambda a: F.celu(a, 0.7), (2, 3)), case(lambda a: torch.celu(a), (4,))],
        "celu_inplace": [case(inplace(lambda b: F.celu(b, 1.3, inplace=True)), (2, 3))],
        "selu": [case(lambda a: F.selu(a), (2, 3)), case(lambda a: torch.selu(a), (3,))],
        "selu_inplace": [case(inplace(lambda b: torch.selu_(b)), (2, 3))],
        "hardshrink": [case(lambda a: F.hardshrink(a, 0.25), (2, 3), twice=False),
                       case(lambda a: a.hardshrink(1.0), (5,), twice=False)],
        "softshrink": [case(lambda a: F.softshrink(a, 0.25), (2, 3), twice=False),
                       case(lambda a: F.softshrink(a * 3, 1.0), (5,), twice=False)],
        "hardsigmoid": [case(lambda a: F.hardsigmoid(a * 4), (2, 3), twice=False)],
        "hardswish": [case(lambda a: F.hardswish(a * 4), (2, 3), twice=False)],
        "mish": [case(lambda a: F.mish(a), (2, 3)), case(inplace(lambda b: F.mish(b, inplace=True)), (3,))],
        "glu": [case(lambda a: F.glu(a), (3, 4)), case(lambda a: F.glu(a, 0), (2, 3))],
        "prelu_kernel": [case(lambda a, w: F.prelu(a, w), (2, 3), (3,)),
                         case(lambda a, w: torch.prelu(a, w), (2, 3, 2), (1,))],
        "rrelu_with_noise": [case(lambda a: F.rrelu(a), (2, 3), twice=False),
                             case(rrelu_train, (3, 2), twice=False)],
        "rrelu_with_noise_inplace": [case(rrelu_train_inplace, (2, 3), twice=False)],
        "threshold": [case(lambda a: F.threshold(a, 0.1, -2.0), (2, 3), twice=False)],
        "threshold_inplace": [case(inplace(lambda b: F.threshold(b, 0.1, 2.0, inplace=True)), (2, 3),
                                   twice=False)],
    }
