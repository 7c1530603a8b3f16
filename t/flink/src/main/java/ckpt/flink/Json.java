package ckpt.flink;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A small JSON writer over maps (insertion order), collections, strings, numbers, booleans, null. */
public final class Json {
    private Json() {}

    public static Map<String, Object> obj(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
        return m;
    }

    public static List<Object> list() {
        return new ArrayList<>();
    }

    public static String write(Object v) {
        StringBuilder b = new StringBuilder();
        write(b, v, 0);
        return b.append('\n').toString();
    }

    private static void indent(StringBuilder b, int n) {
        b.append('\n');
        for (int i = 0; i < n; i++) b.append("  ");
    }

    private static void write(StringBuilder b, Object v, int depth) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof Map) {
            Map<?, ?> m = (Map<?, ?>) v;
            if (m.isEmpty()) {
                b.append("{}");
                return;
            }
            b.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!first) b.append(',');
                first = false;
                indent(b, depth + 1);
                str(b, String.valueOf(e.getKey()));
                b.append(": ");
                write(b, e.getValue(), depth + 1);
            }
            indent(b, depth);
            b.append('}');
        } else if (v instanceof Collection) {
            Collection<?> c = (Collection<?>) v;
            boolean flat = c.stream().allMatch(x -> !(x instanceof Map) && !(x instanceof Collection));
            b.append('[');
            boolean first = true;
            for (Object x : c) {
                if (!first) b.append(flat ? ", " : ",");
                first = false;
                if (!flat) indent(b, depth + 1);
                write(b, x, depth + 1);
            }
            if (!flat && !c.isEmpty()) indent(b, depth);
            b.append(']');
        } else if (v instanceof Number || v instanceof Boolean) {
            b.append(v);
        } else {
            str(b, v.toString());
        }
    }

    private static void str(StringBuilder b, String s) {
        b.append('"');
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        b.append('"');
    }

    /** Write the file whole or not at all (a temporary file renamed over it). */
    public static void save(Path file, Object v) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.write(tmp, write(v).getBytes(StandardCharsets.UTF_8));
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
