"""The eval harness behind ``agentloom eval``: task sets (:mod:`.tasks`), scorers
(:mod:`.scorers`), the document index of retrieval tasks (:mod:`.documents`), the strategies
compared (:mod:`.strategies`), the run and its run file (:mod:`.runner`, :mod:`.records`),
prices (:mod:`.prices`) and the report (:mod:`.report`). See docs/evals.md."""
