from tests.unit.driver.helpers import short_dir

__all__ = ["short_dir"]
