// A JVM whose Java frame chains are corrupted on purpose, for the JVM
// walker's bad-input test (tests/integration/test_java_corrupt.sh): two
// threads call native methods (tests/workloads/chain_corrupt.c, loaded from
// LIB) that overwrite a slot of their own interpreter frame while they run,
// and put it back before they return:
//   main         in spinCorrupted: the frame's Method* made an address no
//                process maps; spins on the CPU (chain_spin_work)
//   chain-sleep  in sleepCorrupted: the frame's saved link (its caller's
//                frame pointer) made the same address; sleeps
// READY is written (whole, by a rename: "pid PID") once both frames are
// corrupted; both put them back and return once STOP exists (60 s at
// most), and the JVM then exits 0.  Run it interpreted and with no
// collector or safepoint that would walk the stacks meanwhile:
//   java -Xint -XX:+UnlockExperimentalVMOptions -XX:+UseEpsilonGC
//        -XX:+UnlockDiagnosticVMOptions -XX:GuaranteedSafepointInterval=0
//        -cp DIR ChainCorrupt LIB READY STOP
// (a JVM that walked a corrupted frame would crash as the walker must not).
// Nothing goes to stdout.
public class ChainCorrupt {
    static native long spinCorrupted(String ready, String stop);

    static native void sleepCorrupted(String stop);

    public static void main(String[] args) throws InterruptedException {
        System.load(args[0]);
        Thread sleeper = new Thread(() -> sleepCorrupted(args[2]), "chain-sleep");
        sleeper.start();
        long turns = spinCorrupted(args[1], args[2]);
        sleeper.join();
        if (turns < 0)
            System.err.println("chain-corrupt: the frames could not be corrupted");
        System.exit(turns < 0 ? 1 : 0);
    }
}
