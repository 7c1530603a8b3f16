#!/usr/bin/env bats
# ckpt-pipeline(5): the loader of ckpt-run; every error names the place of the offending value.

load helper

# Write the pipeline given as $1 to p.json and run ckpt-run on it.
load_pipeline() {
	printf '%s\n' "$1" > p.json
	run timeout 60 ckpt-run p.json
}

@test "pipeline: the examples load and a bounded one runs to its end" {
	for f in "$ROOT"/examples/*.pipeline.json; do
		run timeout 60 ckpt-run --stop-after-ms 1 --dir ck "$f"
		[ "$status" -ne 2 ] || { echo "$f: $output"; false; }
	done
}

@test "pipeline: vertices must be a non-empty array" {
	load_pipeline '{"vertices": []}'
	status_is 2
	output_is 'ckpt-run: p.json:1:14: pipeline: "vertices" must be a non-empty array'
}

@test "pipeline: unknown operator lists the known ones" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "sourc"}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:39: vertex "a": unknown operator "sourc" (one of source, map, filter, keyed_sum, window, broadcast_state, file_sink, discard_sink)'
}

@test "pipeline: parallelism out of range" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "source", "parallelism": 0}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:64: vertex "a": parallelism 0 out of range (1 to 1024)'
}

@test "pipeline: max parallelism below parallelism" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "source", "parallelism": 4, "max_parallelism": 2}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:15: vertex "a": the parallelism 4 is higher than the max parallelism 2'
}

@test "pipeline: an edge to an unknown vertex" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "source"}], "edges": [{"source": "a", "target": "b"}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:87: edge 0: unknown vertex "b"'
}

@test "pipeline: forward does not change parallelism (Flink's rule)" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "source", "parallelism": 2}, {"id": "b", "operator": "map"}], "edges": [{"source": "a", "target": "b", "partitioner": "forward"}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:111: edge 0: forward partitioning does not allow change of parallelism ("a" 2, "b" 1): use rescale, rebalance, hash or broadcast'
}

@test "pipeline: keyed operators need hash-partitioned inputs" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "source"}, {"id": "b", "operator": "window"}], "edges": [{"source": "a", "target": "b"}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:96: edge 0: window "b" is keyed: its inputs need the hash partitioner'
}

@test "pipeline: unknown partitioner" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "source"}, {"id": "b", "operator": "map"}], "edges": [{"source": "a", "target": "b", "partitioner": "shuffle"}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:139: edge 0: unknown partitioner "shuffle" (one of forward, rescale, rebalance, hash, broadcast)'
}

@test "pipeline: an operator accepts only its own params" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "source", "params": {"size_ms": 3}}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:71: vertex "a": params: unknown key "size_ms"'
}

@test "pipeline: an operator other than a source needs an input" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "map"}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:15: vertex "a": map needs an input edge'
}

@test "pipeline: sources have no inputs, sinks no outputs" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "source"}, {"id": "b", "operator": "discard_sink"}], "edges": [{"source": "b", "target": "a"}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:102: edge 0: a source ("a") has no inputs'
	load_pipeline '{"vertices": [{"id": "a", "operator": "source"}, {"id": "b", "operator": "discard_sink"}, {"id": "c", "operator": "map"}], "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:166: edge 1: a sink ("b") has no outputs'
}

@test "pipeline: the file sink needs a path" {
	load_pipeline '{"vertices": [{"id": "s", "operator": "source"}, {"id": "a", "operator": "file_sink"}], "edges": [{"source": "s", "target": "a"}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:50: vertex "a": file_sink needs params "path"'
}

@test "pipeline: broadcast_state needs a broadcast input and another" {
	load_pipeline '{"vertices": [{"id": "s", "operator": "source"}, {"id": "b", "operator": "broadcast_state"}], "edges": [{"source": "s", "target": "b"}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:50: vertex "b": broadcast_state needs a broadcast input and another input'
}

@test "pipeline: checkpointing values are checked" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "source"}], "checkpointing": {"interval_ms": -1}}'
	status_is 2
	output_is 'ckpt-run: p.json:1:84: checkpointing: interval_ms -1 out of range (0 to 1099511627776)'
	load_pipeline '{"vertices": [{"id": "a", "operator": "source"}], "checkpointing": {"after_tasks_finish": 1}}'
	status_is 2
	output_is 'ckpt-run: p.json:1:91: checkpointing: "after_tasks_finish" must be true or false'
}

@test "pipeline: approximate failover and unaligned checkpoints together are refused (Flink's message)" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "source"}], "checkpointing": {"mode": "unaligned"}, "failover": {"strategy": "approximate"}}'
	status_is 2
	output_is 'ckpt-run: p.json:1:77: Approximate Local Recovery and Unaligned Checkpoint can not be used together yet'
}

@test "pipeline: an injected failure names an existing subtask" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "source"}], "failover": {"failures": [{"vertex": "a", "subtask": 1}]}}'
	status_is 2
	output_is 'ckpt-run: p.json:1:104: failure 0: subtask 1 out of range (0 to 0)'
	load_pipeline '{"vertices": [{"id": "a", "operator": "source"}], "failover": {"strategy": "partial"}}'
	status_is 2
	output_is 'ckpt-run: p.json:1:76: failover: unknown strategy "partial" (one of full, region, approximate)'
	# the test hook "closing" declines a stop-with-savepoint, which batch mode does not take
	load_pipeline '{"vertices": [{"id": "src", "operator": "source", "params": {"records": 10}}, {"id": "sink", "operator": "discard_sink"}], "edges": [{"source": "src", "target": "sink", "partition": "blocking"}], "failover": {"failures": [{"vertex": "src", "closing": true}]}}'
	status_is 2
	output_is 'ckpt-run: p.json:1:252: failure 0: batch mode takes no stop-with-savepoint (closing is for pipelined jobs)'
}

@test "pipeline: duplicate vertex, unknown key, blocking edges" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "source"}, {"id": "a", "operator": "map"}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:57: vertex 1: duplicate vertex "a"'
	load_pipeline '{"vertices": [{"id": "a", "operator": "source"}], "bogus": 1}'
	status_is 2
	output_is 'ckpt-run: p.json:1:60: pipeline: unknown key "bogus"'
	load_pipeline '{"vertices": [{"id": "a", "operator": "source"}, {"id": "b", "operator": "map"}], "edges": [{"source": "a", "target": "b", "partition": "hybrid_full"}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:137: edge 0: partition type "hybrid_full" is not supported (pipelined, pipelined_bounded, pipelined_approximate or blocking)'
}

@test "pipeline: a cycle is named" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "source"}, {"id": "b", "operator": "map"}, {"id": "c", "operator": "map"}], "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"}, {"source": "c", "target": "b"}]}'
	status_is 2
	output_is 'ckpt-run: p.json: cycle through vertices "b" -> "c" -> "b"'
}

@test "pipeline: network memory is bounded before anything is allocated" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "source", "parallelism": 1000}, {"id": "b", "operator": "map", "parallelism": 1000}], "edges": [{"source": "a", "target": "b"}]}'
	status_is 2
	output_is 'ckpt-run: p.json:1:1: pipeline: the network buffers would take 62750 MiB (limit 1024 MiB)'
}

@test "pipeline: malformed JSON, not an object, missing file, stdin" {
	load_pipeline '{"vertices": [{"id": "a", "operator": "source"}'
	status_is 2
	output_is "ckpt-run: p.json:2:1: ']' expected near end of file"
	load_pipeline '[1]'
	status_is 2
	output_is 'ckpt-run: p.json:1:1: pipeline must be an object'
	bad 2 'ckpt-run: nonexistent.json: cannot open: No such file or directory' ckpt-run nonexistent.json
	bad 2 'ckpt-run: <stdin>:1:14: pipeline: "vertices" must be a non-empty array' sh -c 'echo "{\"vertices\": 1}" | ckpt-run -'
}
