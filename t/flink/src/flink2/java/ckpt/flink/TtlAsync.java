package ckpt.flink;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.v2.AggregatingState;
import org.apache.flink.api.common.state.v2.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.v2.ListState;
import org.apache.flink.api.common.state.v2.ListStateDescriptor;
import org.apache.flink.api.common.state.v2.MapState;
import org.apache.flink.api.common.state.v2.MapStateDescriptor;
import org.apache.flink.api.common.state.v2.ReducingState;
import org.apache.flink.api.common.state.v2.ReducingStateDescriptor;
import org.apache.flink.api.common.state.v2.StateDescriptor;
import org.apache.flink.api.common.state.v2.ValueState;
import org.apache.flink.api.common.state.v2.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * TtlJob's states as State V2 (asynchronous state, Flink 2.x only): the same names, types and TTL,
 * on a keyed stream with enableAsyncState, so that ForSt keeps them in its asynchronous backend.
 */
public final class TtlAsync {
    private TtlAsync() {}

    public static SingleOutputStreamOperator<String> attach(KeyedStream<Integer, Object> keyed, String uid) {
        return keyed.enableAsyncState().process(new Put(uid));
    }

    static <D extends StateDescriptor<?>> D withTtl(D d) {
        d.enableTimeToLive(TtlJob.ttl());
        return d;
    }

    public static final class Put extends KeyedProcessFunction<Object, Integer, String> {
        private final String uid;
        private transient ValueState<Long> last;
        private transient ListState<String> seen;
        private transient MapState<String, Long> byParity;
        private transient ReducingState<Long> sum;
        private transient AggregatingState<Integer, Double> avg;
        private transient ValueState<Long> plain;

        Put(String uid) {
            this.uid = uid;
        }

        @Override
        public void open(OpenContext ctx) {
            var c = getRuntimeContext();
            last = c.getState(withTtl(new ValueStateDescriptor<>("last", Types.LONG)));
            seen = c.getListState(withTtl(new ListStateDescriptor<>("seen", Types.STRING)));
            byParity = c.getMapState(withTtl(new MapStateDescriptor<>("by-parity", Types.STRING, Types.LONG)));
            sum = c.getReducingState(withTtl(new ReducingStateDescriptor<>("sum", Long::sum, Types.LONG)));
            avg = c.getAggregatingState(withTtl(new AggregatingStateDescriptor<>("avg", new TtlJob.Avg(), TtlJob.ACC)));
            plain = c.getState(new ValueStateDescriptor<>("plain", Types.LONG));
        }

        @Override
        public void processElement(Integer i, Context ctx, Collector<String> out) throws Exception {
            Object k = ctx.getCurrentKey();
            TtlJob.Mirror m = TtlJob.mirror(uid, getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(), k);
            long before = System.currentTimeMillis();
            String parity = i % 2 == 0 ? "even" : "odd";
            // the synchronous forms of State V2: each waits for its request
            last.update((long) i);
            seen.add("e" + i);
            Long p = byParity.get(parity);
            byParity.put(parity, p == null ? 1 : p + 1);
            sum.add((long) i);
            avg.add(i);
            Long n = plain.value();
            plain.update(n == null ? 1 : n + 1);
            ctx.timerService().registerEventTimeTimer(TtlJob.timer(k));
            TtlJob.record(m, k, i, before, System.currentTimeMillis());
        }
    }
}
