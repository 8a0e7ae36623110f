// Ground truth for the JVM walker's tests: the main thread calls
// Shares.alpha, beta and gamma (Shares.java: 50, 30 and 20% of the work by
// construction) in turn, times each call with its own thread's CPU clock
// (ThreadMXBean.getCurrentThreadCpuTime) and at the end writes the shares
// it measured to OUT, a line per method, then the sum they are shares of:
//   Shares.alpha 50.12
//   Shares.beta 29.95
//   Shares.gamma 19.93
//   total-ns 2000123456
// (with --deopt a Shares.delta line too; with --churn the lines
// classes-defined N, the churned class's definitions, and
// classes-unloaded N, the JVM's count of all classes unloaded, taken after
// a last System.gc() once the churn has stopped: every churned class is
// unloaded by then, so N >= classes-defined).
// It runs until the measured calls add up to SECONDS of the main thread's
// CPU time (a loaded machine makes the run longer, not its profile
// thinner), and with --until, on until FILE exists too.  READY is written
// (whole, by a rename: "pid PID") once the loop has run a round and every
// thread the options ask for is in its place.  Nothing goes to stdout.
//
// Usage: java -cp DIR JavaShares [OPTION...] SECONDS OUT READY
//   --threads   a second hot thread, "shares-second", in Shares.omega
//   --blocked   a thread "shares-wait" in Object.wait (Shares.waitForever)
//               and one "shares-sleep" in Thread.sleep (Shares.sleepForever),
//               blocked for the whole run
//   --deopt     Shares.delta measured too; its call site sees a second class
//               from half the run's SECONDS on: its compiled code is
//               deoptimized then (Shares.java says how)
//   --churn     a thread "shares-churn" defines, runs until compiled and
//               drops a class again and again (Shares.churnOnce), with a
//               System.gc() every 8 classes, which unloads them and frees
//               their compiled code while the main thread's loop runs
//   --until FILE  once SECONDS are done, go on until FILE exists
//   --from FILE   the measures start over once FILE exists (at the end of
//               the round that sees it): the shares are then those of the
//               time since, a profile's window, and not of the warm-up
//               before it, whose code the JIT had not yet compiled (with
//               the machine busy, the compiler thread late, alpha's share
//               of the whole run came out 3 points over a profile's)
// The same classes run on OpenJDK 17, 21 and 25 (built with --release 17)
// and under -Xint (interpreted only): there beta and gamma keep their 3:2,
// alpha's share is larger for its real calls of mix (60% on 21 and 25, 80%
// on 17).
// The thread names fit Linux's 15 characters: /proc/PID/task/TID/comm has
// them.
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

public final class JavaShares {
    static volatile boolean done;
    static volatile boolean secondRunning;
    static volatile int classesDefined;
    static volatile long sink;
    static final Object LOCK = new Object();

    private JavaShares() {
    }

    // The other threads, one class for all so that their stacks hold no
    // lambda's hidden class: Worker.run, then the role's method in Shares
    static final class Worker extends Thread {
        final String role;

        Worker(String name, String role) {
            super(name);
            this.role = role;
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                switch (role) {
                case "second":
                    second();
                    break;
                case "wait":
                    Shares.waitForever(LOCK);
                    break;
                case "sleep":
                    Shares.sleepForever();
                    break;
                default:
                    churn();
                }
                if (!done)
                    throw new IllegalStateException("returned");
            } catch (Throwable t) {
                // a thread that leaves its place before the end ends the
                // run: the test would read a profile of something else
                System.err.println("JavaShares: " + getName() + ": " + t);
                Runtime.getRuntime().halt(1);
            }
        }

        static void second() {
            long[] a = data();
            while (!done) {
                sink += Shares.omega(a, 5);
                secondRunning = true;
            }
        }

        static void churn() throws Exception {
            byte[] bytes = Shares.ephemeralBytes();
            for (int n = 1; !done; n++) {
                sink += Shares.churnOnce(bytes);
                classesDefined = n;
                if (n % 8 == 0)
                    System.gc();
            }
        }
    }

    static long[] data() {
        long[] a = new long[1 << 14];
        long x = 12345;
        for (int i = 0; i < a.length; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            a[i] = x;
        }
        return a;
    }

    // Up to 2^18 multiply-adds (up to about 300 us here) between rounds:
    // a round (about 400 us) is near the sampling period at 2 999 Hz, and
    // rounds of one length let a periodic sampler lock onto their phase
    // when the machine is busy (2 CPU hogs: alpha 3.3 points under its
    // measure on java25, as pyshares.py's calls of one size were in
    // Python); the pause makes each round's phase another.  Outside
    // alpha, beta and gamma, so that their code and calls stay as they are
    // (varying their sizes made C2 compile them otherwise).
    static long pause(long x, int n) {
        for (int i = 0; i < n; i++)
            x = x * Shares.K + i;
        return x;
    }

    static void usage() {
        System.err.println("usage: JavaShares [--threads] [--blocked] [--deopt] [--churn] [--until FILE] [--from FILE]"
                + " SECONDS OUT READY");
        System.exit(2);
    }

    // Blocks until every thread started is where READY says it is
    static void awaitPlaces(Thread[] started) throws InterruptedException {
        for (Thread t : started) {
            for (;;) {
                String r = ((Worker) t).role;
                Thread.State s = t.getState();
                boolean there = r.equals("second") ? secondRunning
                        : r.equals("wait") ? s == Thread.State.WAITING
                        : r.equals("sleep") ? s == Thread.State.TIMED_WAITING
                        : classesDefined > 0;
                if (there)
                    break;
                if (s == Thread.State.TERMINATED)
                    throw new IllegalStateException(t.getName() + " ended");
                Thread.sleep(1);
            }
        }
    }

    static void writeWhole(String path, String text) throws IOException {
        Path p = Path.of(path), tmp = Path.of(path + ".tmp");
        Files.write(tmp, text.getBytes(StandardCharsets.UTF_8));
        Files.move(tmp, p, StandardCopyOption.ATOMIC_MOVE);
    }

    public static void main(String[] args) throws Exception {
        boolean threads = false, blocked = false, deopt = false, churn = false;
        String until = null, from = null;
        int i = 0;
        for (; i < args.length && args[i].startsWith("--"); i++) {
            switch (args[i]) {
            case "--threads": threads = true; break;
            case "--blocked": blocked = true; break;
            case "--deopt": deopt = true; break;
            case "--churn": churn = true; break;
            case "--until":
                if (++i == args.length)
                    usage();
                until = args[i];
                break;
            case "--from":
                if (++i == args.length)
                    usage();
                from = args[i];
                break;
            default: usage();
            }
        }
        if (args.length - i != 3)
            usage();
        long limit = (long) (Double.parseDouble(args[i]) * 1e9);
        String out = args[i + 1], ready = args[i + 2];

        List<Thread> started = new ArrayList<>();
        if (threads)
            started.add(new Worker("shares-second", "second"));
        if (blocked) {
            started.add(new Worker("shares-wait", "wait"));
            started.add(new Worker("shares-sleep", "sleep"));
        }
        Worker churner = churn ? new Worker("shares-churn", "churn") : null;
        if (churner != null)
            started.add(churner);
        for (Thread t : started)
            t.start();

        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long[] a = data();
        Shares.Shape shape = new Shares.Square(), first = shape, second = null;
        // alpha, beta, gamma, delta
        long[] spent = new long[4];
        long total = 0, x = 0, t, pace = 1;
        boolean isReady = false;
        for (int round = 0;; round++) {
            t = mx.getCurrentThreadCpuTime(); x += Shares.alpha(a, 5); spent[0] += mx.getCurrentThreadCpuTime() - t; // LINE:call-alpha
            t = mx.getCurrentThreadCpuTime(); x += Shares.beta(a, 3); spent[1] += mx.getCurrentThreadCpuTime() - t; // LINE:call-beta
            t = mx.getCurrentThreadCpuTime(); x += Shares.gamma(a, 2); spent[2] += mx.getCurrentThreadCpuTime() - t; // LINE:call-gamma
            if (deopt) {
                t = mx.getCurrentThreadCpuTime(); x += Shares.delta(shape, a); spent[3] += mx.getCurrentThreadCpuTime() - t; // LINE:call-delta
                if (second == null && total >= limit / 2)
                    second = Shares.secondShape();
                if (second != null)
                    shape = (round & 1) == 0 ? first : second;
            }
            // a pause of pseudo-random length between rounds, unmeasured
            pace = pace * 6364136223846793005L + 1442695040888963407L;
            x += pause(x, (int) (pace >>> 46));
            if (from != null && new File(from).exists()) {
                spent = new long[4];
                from = null;
            }
            total = spent[0] + spent[1] + spent[2] + spent[3];
            if (!isReady) {
                awaitPlaces(started.toArray(new Thread[0]));
                writeWhole(ready, "pid " + ProcessHandle.current().pid() + "\n");
                isReady = true;
            }
            if (total >= limit && (until == null || new File(until).exists()))
                break;
        }
        done = true;
        sink += x;
        if (churner != null) {
            // the class being churned is dropped once its round ends
            churner.join();
            System.gc();
        }

        StringBuilder sb = new StringBuilder();
        String[] names = { "alpha", "beta", "gamma", "delta" };
        for (int m = 0; m < (deopt ? 4 : 3); m++)
            sb.append(String.format(Locale.ROOT, "Shares.%s %.2f%n", names[m], 100.0 * spent[m] / total));
        sb.append("total-ns ").append(total).append('\n');
        if (churn) {
            sb.append("classes-defined ").append(classesDefined).append('\n');
            sb.append("classes-unloaded ")
                    .append(ManagementFactory.getClassLoadingMXBean().getUnloadedClassCount()).append('\n');
        }
        writeWhole(out, sb.toString());
    }
}
