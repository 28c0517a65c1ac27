"""Entity links between chunks: the second hop of a multi-hop question.

A question such as "Where was the director of film X born?" needs two chunks: X's, which
names the director, and the director's own. The first is found by search; the second is a
neighbour of the first in a graph whose nodes are chunks and whose edges join a chunk that
mentions a name to the chunks titled by that name. `entities` finds the names (a measured
heuristic, no model), `links` spreads the search's scores one step over those edges, `spread`
several steps (personalized PageRank), and
`follow_up` turns the names kept passages give into DeepSearch's next searches.
"""

from deepsearcher.graph.entities import mentions, normalise, title_key
from deepsearcher.graph.follow_up import follow_up_queries
from deepsearcher.graph.links import LinkSettings, follow_links, in_search_order
from deepsearcher.graph.spread import SpreadSettings, spread

__all__ = [
    "LinkSettings",
    "SpreadSettings",
    "follow_links",
    "follow_up_queries",
    "in_search_order",
    "mentions",
    "normalise",
    "spread",
    "title_key",
]
