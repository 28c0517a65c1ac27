"""DeepSearcher's `deepsearcher.online_query`: this name is the module `deepsearcher.compat.online_query`."""

import sys

from deepsearcher.compat import online_query as _online_query

sys.modules[__name__] = _online_query
