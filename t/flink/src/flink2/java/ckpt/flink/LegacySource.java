package ckpt.flink;

import org.apache.flink.streaming.api.functions.source.legacy.RichParallelSourceFunction;

/** The legacy parallel source; its package differs between Flink 1.x and 2.x (the rest is shared). */
public abstract class LegacySource<T> extends RichParallelSourceFunction<T> {
    /** What {@link #produce} emits through: a record, under the checkpoint lock. */
    public interface Out<T> {
        void emit(T value);
        Object lock();
    }

    protected abstract void produce(Out<T> out) throws Exception;

    @Override
    public final void run(SourceContext<T> ctx) throws Exception {
        produce(new Out<T>() {
            public void emit(T value) {
                synchronized (ctx.getCheckpointLock()) {
                    ctx.collect(value);
                }
            }

            public Object lock() {
                return ctx.getCheckpointLock();
            }
        });
    }
}
