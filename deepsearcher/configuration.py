"""DeepSearcher's `deepsearcher.configuration`: this name is the module `deepsearcher.compat.configuration`.

`from deepsearcher import configuration` and `from deepsearcher.configuration import init_config`
keep working; both give the one module that holds the process's components.
"""

import sys

from deepsearcher.compat import configuration as _configuration

sys.modules[__name__] = _configuration
