"""Records: the hardware catalog and the workloads, with the data files they are read from (``data/``)."""
