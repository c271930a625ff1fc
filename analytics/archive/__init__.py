"""The archive: the files a played match leaves behind, and the one package that writes and reads them.

layout: directory names, file suffixes and file names; format: Arrow tables, Arrow IPC bytes and the
Parquet files a series is compacted into; store: putting and reading those files on a filesystem
(the data dir's `archive/`, or any pyarrow or fsspec URL). It sits on analytics' floor, below the
orchestrator, so the service writes through it and analytics reads through it, and it imports
nothing of the house but engine: it is the only writing code under the orchestrator.
"""
