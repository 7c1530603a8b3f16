#!/usr/bin/env bats
# ckpt-plan --regions and -f: pipelined regions and restart sets (Flink's region tests, reference part B.5).

load helper
load failover-helper

F=$DATA/failover

@test "regions: SchedulingPipelinedRegionComputeUtilTest 1-5 (unconnected, pairs, all-to-all, cascade, fan-out)" {
	[ "$(regions "$F/r01-unconnected.json")" = "v1:0 v2:0 v3:0" ]
	[ "$(regions "$F/r02-pairs.json")" = "a:0,b:0 a:1,b:1 a:2,b:2" ]
	[ "$(regions "$F/r03-two-all-to-all.json")" = "a:0-1,b:0-1,c:0-1" ]
	[ "$(regions "$F/r04-cascade.json")" = "v1:0,v2:0,v3:0,v4:0,v5:0,v6:0,v7:0" ]
	[ "$(regions "$F/r05-fan-out.json")" = "v1:0,v2:0,v3:0,v4:0,v5:0,v6:0,v7:0" ]
}

@test "regions: SchedulingPipelinedRegionComputeUtilTest 6-8 (blocking edges split regions)" {
	[ "$(regions "$F/r06-blocking-pointwise.json")" = "a:0-1,b:0-1 c:0 c:1" ]
	[ "$(regions "$F/r07-blocking-all-to-all.json")" = "a:0-1,b:0-1 c:0 c:1" ]
	[ "$(regions "$F/r08-blocking-join.json")" = "v1:0,v2:0,v5:0 v3:0,v4:0,v6:0 v7:0" ]
}

@test "regions: SchedulingPipelinedRegionComputeUtilTest 9-11 (diamond, cycle of regions merged, approximate)" {
	[ "$(regions "$F/r09-diamond.json")" = "v1:0,v2:0,v3:0,v4:0" ]
	[ "$(regions "$F/r10-region-cycle.json")" = "v1:0,v2:0,v3:0,v4:0" ]
	[ "$(regions "$F/r11-approximate-diamond.json")" = "v1:0 v2:0 v3:0 v4:0" ]
}

@test "regions: LogicalPipelinedRegionComputeUtilTest chains, join and split" {
	[ "$(regions "$F/l1-chain-bp.json")" = "v1:0 v2:0,v3:0" ]
	[ "$(regions "$F/l2-chain-bb.json")" = "v1:0 v2:0 v3:0" ]
	[ "$(regions "$F/l3-chain-pp.json")" = "v1:0,v2:0,v3:0" ]
	[ "$(regions "$F/l4-join.json")" = "v1:0,v3:0,v4:0 v2:0" ]
	[ "$(regions "$F/l5-split.json")" = "v1:0,v2:0,v3:0 v4:0" ]
}

@test "regions: the full JSON, from a file and from stdin alike" {
	want='{"strategy":"region","regions":[[{"vertex":"a","subtasks":"0-1"},{"vertex":"b","subtasks":"0-1"}],[{"vertex":"c","subtasks":"0"}],[{"vertex":"c","subtasks":"1"}]]}'
	run ckpt-plan --regions "$F/r06-blocking-pointwise.json"
	status_is 0
	output_is "$want"
	run sh -c 'ckpt-plan --regions < "$1"' sh "$F/r06-blocking-pointwise.json"
	status_is 0
	output_is "$want"
}

@test "regions: -s approximate gives one region per subtask, -s full one for everything" {
	[ "$(regions -s approximate "$F/r03-two-all-to-all.json")" = "a:0 a:1 b:0 b:1 c:0 c:1" ]
	[ "$(regions -s full "$F/r06-blocking-pointwise.json")" = "a:0-1,b:0-1,c:0-1" ]
	run ckpt-plan --regions -s full "$F/r01-unconnected.json"
	output_is '{"strategy":"full","regions":[[{"vertex":"v1","subtasks":"0"},{"vertex":"v2","subtasks":"0"},{"vertex":"v3","subtasks":"0"}]]}'
}

@test "regions: the pointwise table (S->T) as regions of one pipelined pointwise edge" {
	run sh -c 'for p in "4 4" "4 2" "2 4" "5 3" "3 5" "16 3" "3 16" "21 19" "19 21"; do
		set -- $p
		printf "{\"vertices\":[{\"id\":\"up\",\"parallelism\":%d},{\"id\":\"down\",\"parallelism\":%d}],\"edges\":[{\"source\":\"up\",\"target\":\"down\",\"distribution\":\"pointwise\"}]}" $1 $2 |
		ckpt-plan --regions | jq -r "\"$1->$2: \" + ([.regions[] | [.[] | .vertex + \":\" + .subtasks] | join(\",\")] | join(\" \"))"
	done'
	status_is 0
	match_golden "$F/pointwise-table.expected"
}

@test "restart: internal errors over blocking edges (RestartPipelinedRegionFailoverStrategyTest 1)" {
	restarts_are "$F/f1-blocking.json" <<-EOF
		-f v1:0 = v1:0,v4:0,v5:0 (3 regions)
		-f v2:0 = v2:0,v4:0,v5:0 (3 regions)
		-f v3:0 = v3:0,v6:0 (2 regions)
		-f v4:0 = v4:0 (1 regions)
		-f v5:0 = v5:0 (1 regions)
		-f v6:0 = v6:0 (1 regions)
	EOF
}

@test "restart: data-consumption errors, the partition read named lost with --lost (test 2)" {
	restarts_are "$F/f1-blocking.json" <<-EOF
		-f v4:0 --lost v1:0 = v1:0,v4:0,v5:0 (3 regions)
		-f v4:0 --lost v2:0 = v2:0,v4:0,v5:0 (3 regions)
		-f v5:0 --lost v1:0 = v1:0,v4:0,v5:0 (3 regions)
		-f v5:0 --lost v2:0 = v2:0,v4:0,v5:0 (3 regions)
		-f v6:0 --lost v3:0 = v3:0,v6:0 (2 regions)
	EOF
}

@test "restart: availability combinations (test 3)" {
	restarts_are "$F/f3-availability.json" <<-EOF
		-f v1:0 = v1:0,v3:0 (2 regions)
		-f v2:0 = v2:0,v3:0 (2 regions)
		-f v3:0 = v3:0 (1 regions)
		-f v1:0 --lost v1:0 = v1:0,v3:0 (2 regions)
		-f v2:0 --lost v1:0 = v1:0,v2:0,v3:0 (3 regions)
		-f v3:0 --lost v1:0 = v1:0,v3:0 (2 regions)
		-f v1:0 --lost v2:0 = v1:0,v2:0,v3:0 (3 regions)
		-f v2:0 --lost v2:0 = v2:0,v3:0 (2 regions)
		-f v3:0 --lost v2:0 = v2:0,v3:0 (2 regions)
		-f v1:0 --lost v1:0 --lost v2:0 = v1:0,v2:0,v3:0 (3 regions)
		-f v2:0 --lost v1:0 --lost v2:0 = v1:0,v2:0,v3:0 (3 regions)
		-f v3:0 --lost v1:0 --lost v2:0 = v1:0,v2:0,v3:0 (3 regions)
	EOF
}

@test "restart: multi-vertex regions (test 4)" {
	restarts_are "$F/f4-multi-vertex.json" <<-EOF
		-f v3:0 = v3:0,v4:0,v5:0,v6:0 (2 regions)
		-f v3:0 --lost v2:0 = v1:0,v2:0,v3:0,v4:0,v5:0,v6:0 (3 regions)
	EOF
}

@test "restart: pipelined_approximate diamond, and -s approximate on a pipelined one (test 6)" {
	for g in "$F/r11-approximate-diamond.json" "-s approximate $F/f9-pipelined-diamond.json"; do
		[ "$(restart -f v1:0 $g)" = "v1:0,v2:0,v3:0,v4:0 (4 regions)" ]
		[ "$(restart -f v2:0 $g)" = "v2:0,v4:0 (2 regions)" ]
		[ "$(restart -f v3:0 $g)" = "v3:0,v4:0 (2 regions)" ]
		[ "$(restart -f v4:0 $g)" = "v4:0 (1 regions)" ]
	done
	[ "$(restart -f v4:0 "$F/f9-pipelined-diamond.json")" = "v1:0,v2:0,v3:0,v4:0 (1 regions)" ]
}

@test "restart: hybrid edges, hybrid_selective pulls its producer in (test 7)" {
	[ "$(restart -f v5:0 "$F/f7-hybrid.json")" = "v3:0,v4:0,v5:0,v6:0 (3 regions)" ]
	[ "$(restart -f v6:0 "$F/f7-hybrid.json")" = "v6:0 (1 regions)" ]
}

@test "restart: -s full restarts everything (RestartAllFailoverStrategyTest)" {
	run ckpt-plan -f v1:0 -s full "$F/f8-restart-all.json"
	status_is 0
	output_is '{"strategy":"full","failed":{"vertex":"v1","subtask":0},"restart":[{"vertex":"v1","subtasks":"0"},{"vertex":"v2","subtasks":"0"},{"vertex":"v3","subtasks":"0"}],"regions":1}'
}

@test "restart: approximate local recovery restarts the failed task and its downstream only (ITCase)" {
	[ "$(restart -s approximate -f map:0 "$F/a1-chain.json")" = "map:0,sink:0 (2 regions)" ]
	[ "$(restart -s approximate -f map:0 "$F/a2-keyby.json")" = "map:0,sink:0 (2 regions)" ]
	[ "$(restart -f map:0 "$F/a2-keyby.json")" = "source:0,map:0-1,sink:0 (1 regions)" ]
}

@test "restart: several failed subtasks at once give an array of failed" {
	run ckpt-plan -f v4:0 -f v6:0 "$F/f1-blocking.json"
	status_is 0
	output_is '{"strategy":"region","failed":[{"vertex":"v4","subtask":0},{"vertex":"v6","subtask":0}],"restart":[{"vertex":"v4","subtasks":"0"},{"vertex":"v6","subtasks":"0"}],"regions":2}'
}

@test "restart: pointwise regions restart only what they connect (21->19 and 19->21)" {
	for p in "21 19 up:9 up:9-10,down:9" "21 19 down:18 up:19-20,down:18" "19 21 up:9 up:9,down:10-11" "19 21 down:1 up:0,down:0-1"; do
		set -- $p
		got=$(printf '{"vertices":[{"id":"up","parallelism":%d},{"id":"down","parallelism":%d}],"edges":[{"source":"up","target":"down","distribution":"pointwise"}]}' $1 $2 |
			ckpt-plan -f $3 | jq -r '[.restart[] | .vertex + ":" + .subtasks] | join(",")')
		[ "$got" = "$4" ]
	done
}

@test "restart: a blocking pointwise edge restarts the consumers of the failed producer only" {
	g='{"vertices":[{"id":"up","parallelism":21},{"id":"down","parallelism":19}],"edges":[{"source":"up","target":"down","distribution":"pointwise","partition":"blocking"}]}'
	[ "$(echo "$g" | restart -f up:10)" = "up:10,down:9 (2 regions)" ]
	[ "$(echo "$g" | restart -f down:9)" = "down:9 (1 regions)" ]
	[ "$(echo "$g" | restart -f down:9 --lost up:9)" = "up:9,down:9 (2 regions)" ]
}

@test "restart: errors in -f and --lost name the option" {
	bad 2 'ckpt-plan: -f mapp:1: unknown vertex "mapp"' ckpt-plan -f mapp:1 "$F/a2-keyby.json"
	bad 2 'ckpt-plan: -f map:2: subtask 2 out of range (parallelism 2)' ckpt-plan -f map:2 "$F/a2-keyby.json"
	bad 2 'ckpt-plan: --lost source:1: subtask 1 out of range (parallelism 1)' ckpt-plan -f map:0 --lost source:1 "$F/a2-keyby.json"
	bad 2 'ckpt-plan: -f map: expected VERTEX:SUBTASK (see ckpt-plan -h)' ckpt-plan -f map "$F/a2-keyby.json"
	bad 2 'ckpt-plan: -f map:-1: expected VERTEX:SUBTASK (see ckpt-plan -h)' ckpt-plan -f map:-1 "$F/a2-keyby.json"
	bad 2 'ckpt-plan: -s regional: expected full, region or approximate (see ckpt-plan -h)' ckpt-plan -f map:0 -s regional "$F/a2-keyby.json"
	bad 2 'ckpt-plan: --lost needs -f (see ckpt-plan -h)' ckpt-plan --lost map:0 "$F/a2-keyby.json"
	bad 2 'ckpt-plan: -G, --regions, -f and -D exclude each other (but -D takes -f) (see ckpt-plan -h)' ckpt-plan --regions -G "$F/a2-keyby.json"
}

@test "regions and restart sets agree with a plain model on random graphs" {
	random_failover 150 11 regions 3> want > graphs.json
	ckpt-plan --regions graphs.json > got.json
	while IFS= read -r line; do regions_line "$line"; done < got.json > got
	diff want got
	seed=20
	for mode in "region v1:0 -" "region v2:0 v0:0" "region v0:0 v2:0" "approximate v1:0 -" "approximate v2:0 v0:0"; do
		set -- $mode
		seed=$((seed + 1))
		random_failover 80 $seed "$mode" 3> want > graphs.json
		if [ "$3" = - ]; then
			ckpt-plan -s $1 -f $2 graphs.json > got.json
		else
			ckpt-plan -s $1 -f $2 --lost $3 graphs.json > got.json
		fi
		while IFS= read -r line; do restart_line "$line"; done < got.json > got
		diff want got
	done
}
