"""``python -m gradexpr``: the ``gradexpr`` command."""
from gradexpr.cli.main import main

if __name__ == "__main__":
    main()
