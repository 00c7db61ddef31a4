"""The programs here are compared within a tolerance by tests/test_tolerance.py, not
exactly by the program plugin: keep the plugin from collecting them."""
collect_ignore_glob = ["*.gx"]
