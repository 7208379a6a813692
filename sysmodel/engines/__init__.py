"""The system model's engines: DRAM timing, the serving engine and its schedulers, replicas, pipelines, traces and "
"metrics."""
