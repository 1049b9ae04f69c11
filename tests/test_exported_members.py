import envfactory


def test_top_level_exports():
    assert envfactory.__all__ == [
        "__version__",
        "EnvFactoryError",
        "EnvSpec",
        "Environment",
        "Session",
        "load_environment",
        "load_spec",
        "save_spec",
    ]
    for name in envfactory.__all__:
        assert hasattr(envfactory, name)
