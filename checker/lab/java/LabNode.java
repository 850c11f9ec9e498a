package partsafe.lab;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.logging.Logger;
import org.apache.ignite.IgniteServer;
import org.apache.ignite.InitParameters;

/**
 * One embedded Apache Ignite 3 node of `partsafe lab ignite` (checker/lab/ignite.py), in a JVM of
 * its own.
 *
 * <pre>
 *   LabNode NAME CONFIG.conf WORK_DIR [--init CLUSTER_NAME MS_NODE[,MS_NODE...]]
 * </pre>
 *
 * <p>{@code IgniteServer.start(name, config, workDir)} returns once the node is up and reachable;
 * with {@code --init} the node then initializes the cluster ({@code IgniteServer.initCluster}):
 * the metastorage's raft group on the nodes named, and the cluster management group (CMG) on the
 * same nodes (its default). SIGTERM runs the JVM's shutdown hooks, and the one registered here
 * stops the node gracefully ({@code IgniteServer.shutdown}); SIGKILL is a crash.
 *
 * <p>The launcher's own lines go through java.util.logging, so that they are written in the same
 * layout as the node's (the JUL configuration the lab passes sets Ignite's JavaLoggerFormatter).
 */
public final class LabNode {
    private static final Logger LOG = Logger.getLogger(LabNode.class.getName());

    private LabNode() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3 && !(args.length == 6 && "--init".equals(args[3]))) {
            System.err.println("usage: LabNode NAME CONFIG WORK_DIR [--init CLUSTER MS_NODES]");
            System.exit(2);
        }
        String name = args[0];
        long t0 = System.nanoTime();
        LOG.info("lab: starting node " + name + ", pid " + ProcessHandle.current().pid());
        IgniteServer server = IgniteServer.start(name, Path.of(args[1]), Path.of(args[2]));
        LOG.info("lab: node " + name + " is up after " + millis(t0) + " ms");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            LOG.info("lab: SIGTERM, stopping node " + name + " gracefully");
            server.shutdown();
        }, "lab-shutdown"));
        if (args.length == 6) {
            String[] metastorage = args[5].split(",");
            LOG.info("lab: initializing cluster " + args[4] + ", metastorage and CMG on "
                    + Arrays.toString(metastorage));
            server.initCluster(InitParameters.builder()
                    .clusterName(args[4])
                    .metaStorageNodeNames(metastorage)
                    .build());
        }
        // completes once the cluster is initialized and this node has joined it
        server.waitForInitAsync().whenComplete((ignored, error) -> {
            if (error != null) {
                LOG.warning("lab: node " + name + " did not join: " + error);
            } else {
                LOG.info("lab: node " + name + " joined the cluster " + millis(t0) + " ms after "
                        + "its start");
            }
        });
        Thread.currentThread().join();
    }

    private static long millis(long t0) {
        return (System.nanoTime() - t0) / 1_000_000;
    }
}
