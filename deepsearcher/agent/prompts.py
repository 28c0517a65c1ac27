"""Prompt templates of the agents, in one place so they can be read and tuned together."""

RAG_ROUTER = """You route a question to the best research agent.

Agents:
{agents}

Question: {query}

Reply with the number of the best agent only, for example: 1"""

COLLECTION_ROUTER = """You choose which document collections may hold the answer to a question.

Question: {query}

Collections, one per line as collection_name: description:
{collections}

Reply with a JSON list of the relevant collection names only, for example ["docs", "faq"]. Reply [] if none is relevant."""

SUB_QUERIES = """Break the question below into at most {max_queries} simpler search queries that together cover what must be found to answer it.
If the question is simple, return a list with the question itself.

Original Question: {query}

Reply with a JSON list of strings only, for example ["first query", "second query"]."""

JUDGE_CHUNK = """Does the passage below contain a fact needed to answer the question or one of these search queries, even only one part of it (such as the person, place, work or date that the answer depends on)?

Question: {question}

Search queries:
{queries}

Passage:
{chunk}

Is the chunk helpful? Reply with YES or NO only."""

REFLECT = """You are researching a question. These queries were already searched:
{queries}

Passages found so far:
{chunks}

Original question: {question}

Which part of the original question do the passages not answer yet? Write at most {max_queries} new search queries for that part.
When a passage names the person, place or work the question depends on (a song's page names its singer), search that name together with what is still asked about it.
Only if the passages already state the full answer, reply with [].
Respond exclusively in valid List form: a JSON list of strings only."""

ANSWER = """Answer the question using only the numbered sources below. Begin with a line "Answer:" followed by the few words that answer the question (a name, a date, a number, yes or no). Then explain in a few sentences, citing the sources you use inline as [1], [2] right after the statement they support. If the sources do not contain the answer, say what is missing.

Question: {question}

Sources:
{sources}

{style}"""

EXTRACT_ANSWER = """Read the passages, then answer the question with only the words that answer it ({kind}), copied exactly from a passage. Do not write a sentence or explain. If no passage states the answer, reply: not found

{passages}

Question: {question}
Answer ({kind}):"""

SHORT_ANSWER = """Write the short answer to the question: only the few words that answer it (a name, a date, a number, yes or no), taken from the answer below. If the answer below says the documents do not contain it, reply NOT FOUND.

Question: {question}

Answer:
{answer}

Short answer:"""

#: The answer when nothing was found to answer from (no LLM call: a model asked with no sources invents one).
NOT_FOUND = "No relevant information found in the documents to answer this question."

ANSWER_STYLE_SHORT = "Write a concise, direct answer."
ANSWER_STYLE_REPORT = "Write a well-organised report in Markdown with a short summary first."

FOLLOWUP_QUERY = """You answer a complex question step by step by asking simpler follow-up questions.

Question: {query}

What you already know:
{context}

Write the single next follow-up question whose answer moves you closest to answering the question. Reply with the question only."""

INTERMEDIATE_ANSWER = """Answer the question using only the passages below. If they do not contain the answer, reply "No relevant information found".

Question: {query}

Passages:
{passages}

Answer in one or two sentences."""

SUPPORTING_DOCS = """Which passages support the answer to the question?

Question: {query}
Answer: {answer}

Passages:
{passages}

Reply with a JSON list of the passage numbers only, for example [0, 2]. Reply [] if none supports it."""

ENOUGH_INFO = """Is the information below enough to answer the question?

Question: {query}

Information:
{context}

Reply with YES or NO only."""

CHAIN_FINAL = """Answer the question using the step-by-step findings and the numbered sources. Begin with a line "Answer:" followed by the few words that answer the question (a name, a date, a number, yes or no). Then explain, citing sources inline as [1], [2].

Question: {question}

Findings:
{context}

Sources:
{sources}

{style}"""
