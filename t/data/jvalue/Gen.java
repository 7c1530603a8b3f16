import java.io.*;
import java.math.*;
import java.util.*;

public class Gen {
    static class Point implements Serializable {
        private static final long serialVersionUID = 1L;
        int x = 3; String label = "p"; double[] w = {0.5, -1.0}; Point next;
    }
    static class Base implements Serializable { private static final long serialVersionUID = 1L; int id = 1; }
    static class Derived extends Base { private static final long serialVersionUID = 1L; int id = 2; String name = "d"; }
    static class Custom implements Serializable {
        private static final long serialVersionUID = 1L; int n = 7;
        private void writeObject(ObjectOutputStream o) throws IOException { o.defaultWriteObject(); o.writeInt(42); o.writeObject("extra"); }
    }
    enum Color { RED, GREEN }
    static void w(String name, Object v) throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (ObjectOutputStream o = new ObjectOutputStream(b)) { o.writeObject(v); }
        try (FileOutputStream f = new FileOutputStream(name + ".bin")) { f.write(b.toByteArray()); }
    }
    public static void main(String[] a) throws Exception {
        w("string", "héllo");
        w("integer", Integer.valueOf(-5));
        w("long", Long.valueOf(1L << 40));
        w("boolean", Boolean.TRUE);
        w("char", Character.valueOf('é'));
        w("double", Double.valueOf(2.5));
        ArrayList<Object> l = new ArrayList<>(); l.add("a"); l.add(1); l.add(null); w("arraylist", l);
        HashMap<String, Integer> m = new LinkedHashMap<>(); m.put("k", 1); m.put("j", 2); w("linkedhashmap", m);
        TreeMap<String, Long> t = new TreeMap<>(); t.put("a", 1L); t.put("b", 2L); w("treemap", t);
        HashSet<Integer> hs = new HashSet<>(); hs.add(9); w("hashset", hs);
        w("intarray", new int[] {1, -2, 3});
        w("bytearray", new byte[] {0, 1, (byte) 255});
        w("bigint", new BigInteger("-123456789012345678901234567890"));
        w("bigdec", new BigDecimal("-12345.6789"));
        w("date", new Date(1700000000123L));
        w("enum", Color.GREEN);
        Point p = new Point(); p.next = new Point(); w("point", p);
        w("derived", new Derived());
        w("custom", new Custom());
        String s = "shared"; Object[] arr = {s, s}; w("shared", arr);
        w("class", String.class);
    }
}
