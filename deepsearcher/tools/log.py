"""`deepsearcher.tools.log`, DeepSearcher's oldest path of `deepsearcher.utils.log`."""

from deepsearcher.utils.log import *  # noqa: F403 - the same module under its old name
