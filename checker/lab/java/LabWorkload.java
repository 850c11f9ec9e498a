package partsafe.lab;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.ignite.client.IgniteClient;
import org.apache.ignite.sql.ResultSet;
import org.apache.ignite.sql.SqlRow;
import org.apache.ignite.tx.Transaction;

/**
 * The client workload of `partsafe lab ignite` (checker/lab/ignite.py): Ignite 3's thin client
 * ({@code IgniteClient}, the client connector's protocol) in a JVM of its own, as the Hazelcast
 * lab's checker/lab/workload.py is a process of its own.
 *
 * <pre>
 *   LabWorkload setup  ADDRESSES ZONE TABLE REPLICAS PARTITIONS SCALE_SECONDS
 *   LabWorkload write  ADDRESSES TABLE HISTORY ROWS STOP_FILE
 *   LabWorkload verify ADDRESSES TABLE HISTORY
 * </pre>
 *
 * <p>ADDRESSES is {@code host:port,host:port,...} (the nodes' client connectors).
 *
 * <ul>
 *   <li>{@code setup}: the zone (in-memory storage profile {@code aimem}; its data nodes follow
 *       the logical topology SCALE_SECONDS after a node leaves or joins: {@code AUTO SCALE DOWN},
 *       {@code AUTO SCALE UP}) and the table in it.
 *   <li>{@code write}: inserts ROWS rows ({@code id = n}, {@code v = 'v<n>'}), prints
 *       {@code {"loaded": N}}, then one more row every 50 ms until STOP_FILE exists; one JSON
 *       line per insert appended to HISTORY: {@code {"op": "insert", "key", "value", "start",
 *       "end", "ok", "error"}} (ms since the epoch). An insert that raised is not acknowledged: it
 *       may or may not have taken effect.
 *   <li>{@code verify}: reads back every acknowledged insert of HISTORY (one scan, then each row
 *       the scan missed once more by its key), appends one {@code {"op": "get", ...}} line each,
 *       and prints one JSON summary: acknowledged, lost_count, lost (the first 50), size.
 * </ul>
 *
 * Every line printed on stdout is one JSON document; diagnostics go to stderr.
 */
public final class LabWorkload {
    private static final long OP_TIMEOUT_MS = 10_000;
    private static final Pattern ACKED = Pattern.compile(
            "\"op\": \"insert\", \"key\": (\\d+), \"value\": \"([^\"]*)\".*\"ok\": true");

    private LabWorkload() {
    }

    public static void main(String[] a) throws Exception {
        if (a.length < 3) {
            System.err.println("usage: LabWorkload setup|write|verify ADDRESSES ...");
            System.exit(2);
        }
        try (IgniteClient client = IgniteClient.builder()
                .addresses(a[1].split(","))
                .connectTimeout(5_000)
                .operationTimeout(OP_TIMEOUT_MS)
                .build()) {
            switch (a[0]) {
                case "setup" -> setup(client, a[2], a[3], a[4], a[5], a[6]);
                case "write" -> write(client, a[2], Path.of(a[3]), Integer.parseInt(a[4]),
                        Path.of(a[5]));
                case "verify" -> verify(client, a[2], Path.of(a[3]));
                default -> {
                    System.err.println("unknown mode " + a[0]);
                    System.exit(2);
                }
            }
        }
    }

    static void setup(IgniteClient client, String zone, String table, String replicas,
                      String partitions, String scale) {
        String[] ddl = {
            "CREATE ZONE IF NOT EXISTS " + zone + " (REPLICAS " + replicas + ", PARTITIONS "
                + partitions + ", AUTO SCALE UP " + scale + ", AUTO SCALE DOWN " + scale
                + ") STORAGE PROFILES ['aimem']",
            "CREATE TABLE IF NOT EXISTS " + table + " (id INT PRIMARY KEY, v VARCHAR) ZONE " + zone,
        };
        for (String statement : ddl) {
            long start = System.currentTimeMillis();
            client.sql().execute((Transaction) null, statement).close();
            System.out.println("{\"applied\": " + quote(statement) + ", \"ms\": "
                    + (System.currentTimeMillis() - start) + "}");
        }
        System.out.flush();
    }

    static void write(IgniteClient client, String table, Path history, int rows, Path stop)
            throws IOException, InterruptedException {
        String insert = "INSERT INTO " + table + " (id, v) VALUES (?, ?)";
        int n = 0;
        int acked = 0;
        try (BufferedWriter out = append(history)) {
            for (; n < rows; n++) {
                acked += insert(client, insert, n, out) ? 1 : 0;
            }
            System.out.println("{\"loaded\": " + acked + ", \"tried\": " + n + "}");
            System.out.flush();
            while (!Files.exists(stop)) {
                acked += insert(client, insert, n++, out) ? 1 : 0;
                Thread.sleep(50);
            }
        }
        System.out.println("{\"written\": " + acked + ", \"tried\": " + n + "}");
    }

    private static boolean insert(IgniteClient client, String insert, int key, BufferedWriter out)
            throws IOException {
        String value = "v" + key;
        long start = System.currentTimeMillis();
        String error = "";
        try {
            client.sql().execute((Transaction) null, insert, key, value).close();
        } catch (RuntimeException e) { // every client error is an unacknowledged write
            error = (e.getClass().getSimpleName() + ": " + e.getMessage());
            error = error.substring(0, Math.min(200, error.length()));
        }
        record(out, "insert", key, value, start, error.isEmpty(), error);
        return error.isEmpty();
    }

    static void verify(IgniteClient client, String table, Path history)
            throws IOException, InterruptedException {
        Map<Integer, String> acked = new LinkedHashMap<>();
        for (String line : Files.readAllLines(history, StandardCharsets.UTF_8)) {
            Matcher m = ACKED.matcher(line);
            if (m.find()) {
                acked.put(Integer.parseInt(m.group(1)), m.group(2));
            }
        }
        Map<Integer, String> found = new LinkedHashMap<>();
        for (int attempt = 1; attempt <= 5; attempt++) {
            try (ResultSet<SqlRow> rs = client.sql().execute((Transaction) null,
                    "SELECT id, v FROM " + table)) {
                found.clear();
                rs.forEachRemaining(r -> found.put(r.intValue("ID"), r.stringValue("V")));
                break;
            } catch (RuntimeException e) {
                System.err.println("scan " + attempt + " failed: " + e);
                Thread.sleep(3_000);
            }
        }
        List<Integer> lost = new ArrayList<>();
        try (BufferedWriter out = append(history)) {
            for (Map.Entry<Integer, String> row : acked.entrySet()) {
                long start = System.currentTimeMillis();
                String got = found.get(row.getKey());
                String error = "";
                if (got == null) { // not in the scan: read by its key once more
                    try (ResultSet<SqlRow> rs = client.sql().execute((Transaction) null,
                            "SELECT v FROM " + table + " WHERE id = ?", row.getKey())) {
                        got = rs.hasNext() ? rs.next().stringValue(0) : null;
                    } catch (RuntimeException e) {
                        error = (e.getClass().getSimpleName() + ": " + e.getMessage());
                        error = error.substring(0, Math.min(200, error.length()));
                    }
                }
                boolean ok = row.getValue().equals(got);
                if (!ok) {
                    lost.add(row.getKey());
                }
                record(out, "get", row.getKey(), got, start, ok, error);
            }
        }
        StringBuilder first = new StringBuilder();
        for (int i = 0; i < Math.min(50, lost.size()); i++) {
            first.append(i == 0 ? "" : ", ").append(lost.get(i));
        }
        System.out.println("{\"acknowledged\": " + acked.size() + ", \"lost\": [" + first
                + "], \"lost_count\": " + lost.size() + ", \"size\": " + found.size() + "}");
    }

    private static BufferedWriter append(Path history) throws IOException {
        return Files.newBufferedWriter(history, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }

    /** One history line; its field order is the one `ACKED` reads back. */
    private static void record(BufferedWriter out, String op, int key, String value, long start,
                               boolean ok, String error) throws IOException {
        out.write("{\"op\": \"" + op + "\", \"key\": " + key + ", \"value\": "
                + (value == null ? "null" : quote(value)) + ", \"start\": " + start
                + ", \"end\": " + System.currentTimeMillis() + ", \"ok\": " + ok
                + ", \"error\": " + quote(error) + "}\n");
        out.flush();
    }

    /** A JSON string literal. */
    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
