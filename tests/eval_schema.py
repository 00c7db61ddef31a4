"""docs/eval.schema.json, checked by jsonschema (the test extra): one validator for every test of
``eval --json``. JSON Schema's ``number`` admits any float; ours are finite (non-finite values are
the strings "nan", "inf", "-inf"), so ``number`` is redefined to refuse NaN and the infinities."""
import json
import math
import pathlib

import jsonschema

SCHEMA = json.loads((pathlib.Path(__file__).resolve().parent.parent / "docs" / "eval.schema.json")
                    .read_text(encoding="utf-8"))

_Base = jsonschema.validators.validator_for(SCHEMA)
_Base.check_schema(SCHEMA)
_types = _Base.TYPE_CHECKER.redefine(
    "number", lambda checker, v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v))
_Validator = jsonschema.validators.extend(_Base, type_checker=_types)(SCHEMA)


def validate(doc) -> None:
    """Raise ``jsonschema.ValidationError`` (naming the path) unless ``doc`` follows the schema."""
    _Validator.validate(doc)


def strict_loads(text: str):
    """json.loads that refuses NaN/Infinity (invalid JSON that Python would otherwise accept)."""
    def refuse(name):
        raise ValueError(f"invalid JSON constant {name}")
    return json.loads(text, parse_constant=refuse)
