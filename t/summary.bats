#!/usr/bin/env bats
# ckpt-inspect's summary for a person (issue 38): keyed states listed with their operator (counts
# equal to -R's rows), the table a terminal shows (tmux), --skew and its --plot.

load helper

# The forms of one job, and the one the goldens show.
ART() { echo "$FIXTURES/flink-artifacts"; }
JOB=new-stateful-udf-migration-itcase-flink1.19-hashmap-savepoint

# gnuplot draws --plot: without it the test is skipped, and fails under CI=true.
needs_gnuplot() {
	command -v gnuplot >/dev/null && return 0
	if [ "${CI-}" = true ]; then
		echo "no gnuplot (Debian: gnuplot-nox); CI=true requires it"
		return 1
	fi
	skip "no gnuplot (Debian: gnuplot-nox)"
}

# Every snapshot among the fixtures (a directory holding _metadata).
snapshots() { find "$FIXTURES" -name _metadata | sed 's|/_metadata$||' | sort; }

@test "summary: each keyed state's entries equal the rows -R prints, on every fixture" {
	needs_fixtures
	local d s r want have compared=0 unknown=0
	for d in $(snapshots); do
		s=$(ckpt-inspect "$d" 2>/dev/null) || continue # refused (version 1, legacy state)
		if ! r=$(ckpt-inspect -R "$d" 2>/dev/null); then
			# -R refuses what it cannot read: the summary says why instead of counting
			[ "$(jq '[.missing_files // empty, (.operators[].states[] | select(.entries == null) | .entries_not_read)] | length' <<<"$s")" -gt 0 ] ||
				{ echo "$d: -R fails, the summary names nothing it could not read"; return 1; }
			unknown=$((unknown + 1))
			continue
		fi
		have=$(jq -c '[.operators[] | .id as $o | .states[] | select(.mode == "keyed" and .entries != 0) | [$o, .name, .entries]] | sort' <<<"$s")
		want=$(jq -sc '[.[] | select(.key_group != null) | [.operator, .state]] | group_by(.) | map(.[0] + [length]) | sort' <<<"$r")
		[ "$have" = "$want" ] || { echo "$d"; diff <(jq -c '.[]' <<<"$want") <(jq -c '.[]' <<<"$have"); return 1; }
		compared=$((compared + 1))
	done
	echo "$compared compared, $unknown with counts unknown"
	[ "$compared" -ge 100 ]
}

@test "summary: a keyed state's line in the JSON, its operator's totals counting it" {
	needs_fixtures
	run sh -c 'ckpt-inspect "$1" | jq -c "(.operators[1] | [.states, .entries, .bytes]), .totals"' sh "$(ART)/$JOB"
	status_is 0
	output_is '[[{"name":"state-name","mode":"keyed","kind":"value","entries":4,"bytes":72,"key_groups":"1-3","skew":{"subtasks":4,"max_entries":2,"max_entries_subtask":2,"max_bytes":36,"max_bytes_subtask":2}}],4,72]
{"operators":8,"subtasks":24,"entries":40,"bytes":932,"in_flight_bytes":0,"handles":16,"handle_bytes":15451}'
	# a count not known is null, with the reason beside it
	run sh -c 'ckpt-inspect "$1" | jq -c "[.operators[].states[] | select(.entries == null)][0] | [.mode, .bytes, .entries_not_read]"' sh \
		"$(ART)/stateful-scala-udf-migration-itcase-flink1.19-hashmap-savepoint-native"
	status_is 0
	[ "$(jq -r '.[2] | length > 0' <<<"$output")" = true ]
	[ "$(jq -c '.[0:2]' <<<"$output")" = '["keyed",null]' ]
}

@test "summary: the table fits a screen for every fixture, at 79 columns but for its first line and single long words" {
	needs_fixtures
	local d
	for d in $(snapshots); do
		(cd "${d%/*}" && ckpt-inspect --table "${d##*/}") >t.txt 2>/dev/null || continue
		[ "$(wc -l <t.txt)" -le 60 ] || { echo "$d: $(wc -l <t.txt) lines"; return 1; }
		[ "$(sed 1d t.txt | awk 'length($0) > 79 && NF > 1' | wc -l)" = 0 ] || { echo "$d:"; awk 'length($0) > 79' t.txt; return 1; }
	done
	run ckpt-inspect --table "$(ART)/$JOB"
	status_is 0
	[ "$(sed -n 2p <<<"$output")" = 'operator (uid or id)              name                  parallelism  finished' ]
}

# A state document of N operators, the first S without state, the others with M list states each.
wide_doc() {
	jq -nc --argjson n "$1" --argjson s "$2" --argjson m "$3" '{format: "ckpt-state", version: 1,
		checkpoint_id: 7, kind: "savepoint", operators: [range($n) as $i | {id: "op\($i)",
		uid: "uid-\($i)", name: "Op \($i)", vertex: "v\($i)", parallelism: 1, max_parallelism: 128,
		subtasks: [{index: 0, operator_state: (if $i < $s then {} else
			[range($m) as $j | {key: "s\($j)", value: {mode: "list", entries: ["x"]}}] | from_entries end)}]}]}'
}

@test "summary: a job too large for a screen is folded: operators without state on one line, states summed, the rest counted" {
	wide_doc 6 2 2 | ckpt-merge -o small.tar
	run ckpt-inspect --table small.tar
	status_is 0
	[ "$(wc -l <<<"$output")" = 18 ] # every operator and state: no fold when it fits
	wide_doc 30 10 3 | ckpt-merge -o mid.tar
	run ckpt-inspect --table mid.tar
	status_is 0
	[ "$(wc -l <<<"$output")" -le 60 ]
	[ "$(sed -n 4,5p <<<"$output")" = "uid-10                            Op 10                 1/128
  3 states: 3 entries, 3 bytes" ]
	grep -qx '10 operators without state: uid-0 uid-1 uid-2 uid-3 uid-4 uid-5 uid-6 uid-7' <<<"$output"
	wide_doc 12 0 4 | ckpt-merge -o some.tar
	run ckpt-inspect --table some.tar
	status_is 0
	[ "$(sed -n 4,7p <<<"$output")" = "uid-0                             Op 0                  1/128
  s0                          list              1       1
  ... 3 more states: 3 entries, 3 bytes
uid-1                             Op 1                  1/128" ]
	wide_doc 80 0 2 | ckpt-merge -o many.tar
	run ckpt-inspect --table many.tar
	status_is 0
	[ "$(wc -l <<<"$output")" -le 60 ]
	grep -qx '\.\.\. 59 more operators: ckpt-inspect --json lists them all' <<<"$output"
}

@test "summary: on a terminal, a table (tmux); through a pipe, JSON" {
	needs_fixtures
	on_terminal "$(ART)" "ckpt-inspect $JOB"
	match_golden "$DATA/summary/$JOB.screen.expected"
	# not a terminal: JSON, as before; --json on a terminal too
	run sh -c 'ckpt-inspect "$1" | head -c 9' sh "$(ART)/$JOB"
	output_is '{"file":"'
}

@test "summary: --json, --table, --skew and --plot go with the summary alone" {
	bad 2 'ckpt-inspect: --table goes with the summary, not with -a, -R, -c or -d (see ckpt-inspect -h)' ckpt-inspect -a --table x
	bad 2 'ckpt-inspect: --plot goes with --skew (see ckpt-inspect -h)' ckpt-inspect --plot x.svg x
	bad 2 'ckpt-inspect: --json, --table and --skew exclude each other (see ckpt-inspect -h)' ckpt-inspect --json --skew x
	bad 2 'ckpt-inspect: -p indents JSON: not with --table (see ckpt-inspect -h)' ckpt-inspect -p --table x
}

@test "summary: --skew, entries and bytes per subtask and per key group" {
	needs_fixtures
	run ckpt-inspect --skew "$(ART)/$JOB"
	status_is 0
	match_golden "$DATA/summary/$JOB.skew.expected"
	# the subtasks' counts add up to the state's, the key groups' too
	run sh -c 'ckpt-inspect --skew "$1" | jq -sc "group_by(.operator, .state) | map([(map(select(.key_groups)) | map(.entries) | add), (map(select(.key_group)) | map(.entries) | add)]) | unique"' sh "$(ART)/$JOB"
	output_is '[[4,4]]'
}

@test "summary: --skew --plot draws an SVG, whole or not at all" {
	needs_fixtures
	needs_gnuplot
	run ckpt-inspect --skew --plot skew.svg "$(ART)/$JOB"
	status_is 0
	[ -z "$output" ]
	# it parses as XML and holds a series per state of each operator, and the subtasks marked
	run python3 -c '
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1])
ns = "{http://www.w3.org/2000/svg}"
texts = ["".join(e.itertext()).strip() for e in t.iter(ns + "text")]
print(sum(1 for e in t.iter(ns + "g") if e.get("id", "").startswith("gnuplot_plot_")))
print(sorted(set(x for x in texts if "state" in x and ":" not in x)))
print(sum(1 for x in texts if "per key group, subtasks above" in x))' skew.svg
	status_is 0
	# 4 keyed operators, (1 + 3 + 1 + 3) states, each drawn twice (bytes, entries)
	output_is "16
['_timer_state/event_timer', '_timer_state/processing_timer', 'state-name']
8"
	ls >files.txt
	[ "$(cat files.txt)" = "$(printf 'files.txt\nskew.svg')" ]
	# gnuplot failing half-way: nothing written, no temporary left
	mkdir fake
	printf '#!/bin/sh\necho "<svg" ; exit 3\n' >fake/gnuplot
	chmod +x fake/gnuplot
	PATH=$PWD/fake:$PATH bad 2 'ckpt-inspect: cut.svg: gnuplot failed (exit status 3)' ckpt-inspect --skew --plot cut.svg "$(ART)/$JOB"
	[ ! -e cut.svg ] && [ -z "$(ls | grep cut)" ]
}
