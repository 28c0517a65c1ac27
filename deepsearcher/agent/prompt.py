"""`deepsearcher.agent.prompt`, DeepSearcher's oldest path of the agents' prompts."""

from deepsearcher.agent.prompts import *  # noqa: F403 - the same prompts under the old module name
