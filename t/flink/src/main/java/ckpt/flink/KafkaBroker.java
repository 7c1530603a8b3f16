package ckpt.flink;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real Kafka broker for the harness (issue 41): Apache Kafka's server (kafka/pom.xml, Kafka 4.x)
 * in KRaft mode, one node that is broker and controller, on 127.0.0.1, in a JVM of its own so that
 * its kafka-clients never meets the connector's.
 *
 * <p>The harness side ({@link #start()}) launches that JVM with this class as its main (the class
 * path: the harness's classes and target/kafka/classpath.txt, which run.sh writes), reads "READY
 * PORT DIR" and keeps the child's standard input open.  The child formats a fresh log directory,
 * starts the server and, once its standard input ends (the harness closed it, or died however it
 * died), shuts the server down and deletes the directory.  So the broker never outlives the harness.
 * Only the JDK and reflection here: the harness's class path has no Kafka server.
 */
public final class KafkaBroker implements AutoCloseable {
    private final Process proc;
    private final Path dir;
    final String bootstrap;

    private KafkaBroker(Process proc, String bootstrap, Path dir) {
        this.proc = proc;
        this.bootstrap = bootstrap;
        this.dir = dir;
    }

    /** The broker's class path: t/flink/target/kafka/classpath.txt beside this line's classes. */
    static String classPath() throws Exception {
        Path classes = Paths.get(KafkaBroker.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path cp = classes.getParent().getParent().resolve("kafka").resolve("classpath.txt");
        if (!Files.exists(cp)) throw new IllegalStateException("no Kafka broker class path " + cp + " (run t/flink/run.sh)");
        return classes + java.io.File.pathSeparator + Files.readString(cp).trim();
    }

    /** Start a broker in the background (its JVM starts while the harness starts its MiniCluster). */
    static java.util.concurrent.CompletableFuture<KafkaBroker> startAsync() {
        java.util.concurrent.CompletableFuture<KafkaBroker> f = new java.util.concurrent.CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(start());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        }, "kafka-broker-start");
        t.setDaemon(true);
        t.start();
        return f;
    }

    /** Close the broker a startAsync future holds or will hold. */
    static void close(java.util.concurrent.CompletableFuture<KafkaBroker> f) {
        if (f != null) f.thenAccept(KafkaBroker::close);
    }

    /**
     * A broker and the MiniCluster (Main.startCluster), the broker's JVM starting while the cluster
     * starts: what kafka-restore and kafka-consumer run on.  The cluster failing to start closes the
     * broker; the broker failing to start (or to start within 120 s) leaves the cluster to the
     * caller, which closes Main.mc in any case.
     */
    static KafkaBroker withCluster() throws Exception {
        java.util.concurrent.CompletableFuture<KafkaBroker> started = startAsync();
        try {
            Main.startCluster();
        } catch (Exception e) {
            close(started);
            throw e;
        }
        return started.get(120, TimeUnit.SECONDS);
    }

    /** Start a broker; it stops at close() and at the harness's exit. */
    static KafkaBroker start() throws Exception {
        long t0 = System.nanoTime();
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", classPath(), KafkaBroker.class.getName());
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = r.readLine();
        if (line == null || !line.startsWith("READY ")) {
            p.destroyForcibly();
            throw new IllegalStateException("the Kafka broker did not start: " + line);
        }
        String[] w = line.split(" ", 3);
        KafkaBroker b = new KafkaBroker(p, "127.0.0.1:" + w[1], Paths.get(w[2]));
        Thread drain = new Thread(() -> {
            try {
                while (r.readLine() != null) { }
            } catch (IOException e) {
                // the child is gone
            }
        }, "kafka-broker-stdout");
        drain.setDaemon(true);
        drain.start();
        Runtime.getRuntime().addShutdownHook(new Thread(b::close));
        System.out.println("kafka broker " + b.bootstrap + " up in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        return b;
    }

    @Override
    public synchronized void close() {
        if (!proc.isAlive() && !Files.exists(dir)) return;
        try {
            proc.getOutputStream().close();
            if (!proc.waitFor(30, TimeUnit.SECONDS)) proc.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            proc.destroyForcibly();
        }
        delete(dir);
    }

    static void delete(Path d) {
        if (d == null || !Files.exists(d)) return;
        try (Stream<Path> s = Files.walk(d)) {
            s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            System.err.println("kafka broker: could not delete " + d + ": " + e);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    // ---- the child JVM ----

    private static volatile Object server;

    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory("ckpt-kafka-");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stopServer(dir)));
        int port = freePort(), controller = freePort();
        Properties p = new Properties();
        p.setProperty("process.roles", "broker,controller");
        p.setProperty("node.id", "1");
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controller);
        p.setProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
        p.setProperty("controller.listener.names", "CONTROLLER");
        p.setProperty("inter.broker.listener.name", "PLAINTEXT");
        p.setProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.setProperty("controller.quorum.voters", "1@127.0.0.1:" + controller);
        p.setProperty("log.dirs", dir.resolve("logs").toString());
        p.setProperty("num.partitions", "1");
        p.setProperty("auto.create.topics.enable", "false");
        p.setProperty("offsets.topic.replication.factor", "1");
        p.setProperty("offsets.topic.num.partitions", "1");
        p.setProperty("transaction.state.log.replication.factor", "1");
        p.setProperty("transaction.state.log.min.isr", "1");
        p.setProperty("transaction.state.log.num.partitions", "1");
        p.setProperty("share.coordinator.state.topic.replication.factor", "1");
        p.setProperty("share.coordinator.state.topic.min.isr", "1");
        p.setProperty("group.initial.rebalance.delay.ms", "0");
        p.setProperty("log.segment.bytes", "1048576");
        p.setProperty("num.network.threads", "2");
        p.setProperty("num.io.threads", "2");
        p.setProperty("background.threads", "2");
        p.setProperty("num.recovery.threads.per.data.dir", "1");
        p.setProperty("log.flush.interval.messages", "1");
        Path props = dir.resolve("server.properties");
        try (var o = Files.newOutputStream(props)) {
            p.store(o, "ckpt harness Kafka broker");
        }
        // kafka-storage format: the log directory of a fresh cluster (static quorum: one voter)
        Method format = Class.forName("kafka.tools.StorageTool").getMethod("execute", String[].class, PrintStream.class);
        java.io.ByteArrayOutputStream said = new java.io.ByteArrayOutputStream();
        int rc = (Integer) format.invoke(null, new String[] {"format", "-t", "MkU3OEVBNTcwNTJENDM2Qg", "-c", props.toString()},
                new PrintStream(said, true, StandardCharsets.UTF_8));
        if (rc != 0) throw new IllegalStateException("kafka-storage format exited " + rc + ": " + said);
        Class<?> cfgClass = Class.forName("kafka.server.KafkaConfig");
        Object cfg = cfgClass.getMethod("fromProps", Properties.class).invoke(null, p);
        Class<?> timeClass = Class.forName("org.apache.kafka.common.utils.Time");
        Object time = timeClass.getField("SYSTEM").get(null);
        Object s = Class.forName("kafka.server.KafkaRaftServer").getConstructor(cfgClass, timeClass).newInstance(cfg, time);
        s.getClass().getMethod("startup").invoke(s);
        server = s;
        System.out.println("READY " + port + " " + dir);
        System.out.flush();
        InputStream in = System.in;
        while (in.read() >= 0) { }
        System.exit(0); // the shutdown hook stops the server and deletes dir
    }

    private static synchronized void stopServer(Path dir) {
        Object s = server;
        server = null;
        if (s != null) {
            try {
                s.getClass().getMethod("shutdown").invoke(s);
                s.getClass().getMethod("awaitShutdown").invoke(s);
            } catch (Exception e) {
                System.err.println("kafka broker: shutdown: " + e);
            }
        }
        delete(dir);
    }
}
