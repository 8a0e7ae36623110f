// The methods whose CPU time JavaShares measures (ground truth for the
// JVM walker's tests), and the code its threads block or churn in.  Each
// hot line ends in a marker a test finds the line number by:
//   grep -n '// LINE:alpha$' tests/workloads/Shares.java | cut -d: -f1
// Markers: alpha mixrow mix beta gamma delta square circle omega wait sleep
// ephemeral here; call-alpha call-beta call-gamma call-delta on the calls
// in JavaShares.main.  Keep each hot loop on its one line: a walker
// reports the line of the bytecode it stopped at, and the loop's header,
// body and call must all be that line for the test to know it.
//
// alpha, beta and gamma do the same work per element (one multiply, one
// shift, one xor, one add carried from element to element: nothing the JIT
// can vectorize or skip) over the same array, 5, 3 and 2 times: their
// shares are 50, 30 and 20% by construction.  alpha does it a row at a
// time in mixRow, each element in mix, callees so small and hot that C1
// and C2 inline them: in compiled code mixRow is an inlined frame under
// alpha (mix folded into mixRow's line: see mixRow); interpreted (-Xint,
// or before the JIT), real calls, which make alpha's share only larger.
// C2 may inline alpha, beta and gamma into JavaShares.main's loop as well
// (its on-stack-replacement compile): they are then inlined frames too.
import java.util.function.LongUnaryOperator;

final class Shares {
    static final long K = 0x9E3779B97F4A7C15L;

    private Shares() {
    }

    static long mix(long x, long y) {
        return (x ^ y) * K + (x >>> 29); // LINE:mix
    }

    // One row of alpha's: small and hot, inlined into alpha by C1 and C2.
    // HotSpot records inlined methods at the points where compiled code
    // can stop (calls, safepoint polls): mix, without one, is folded into
    // the line that calls it; mixRow's loop keeps a poll (C2 strip-mines
    // it), so in compiled code mixRow stays a frame of its own under alpha.
    static long mixRow(long x, long[] a) {
        for (int i = 0; i < a.length; i++) x = mix(x, a[i]); // LINE:mixrow
        return x;
    }

    static long alpha(long[] a, int n) {
        long x = n;
        for (int r = 0; r < n; r++) x = mixRow(x, a); // LINE:alpha
        return x;
    }

    static long beta(long[] a, int n) {
        long x = n;
        for (int r = 0; r < n; r++) for (int i = 0; i < a.length; i++) x = (x ^ a[i]) * K + (x >>> 29); // LINE:beta
        return x;
    }

    static long gamma(long[] a, int n) {
        long x = n;
        for (int r = 0; r < n; r++) for (int i = 0; i < a.length; i++) x = (x ^ a[i]) * K + (x >>> 29); // LINE:gamma
        return x;
    }

    // The second hot thread's method (JavaShares --threads), the same work
    // in a method of its own
    static long omega(long[] a, int n) {
        long x = n;
        for (int r = 0; r < n; r++) for (int i = 0; i < a.length; i++) x = (x ^ a[i]) * K + (x >>> 29); // LINE:omega
        return x;
    }

    // JavaShares --deopt: delta's call of Shape.area sees one class,
    // Square, until half the run: C2 compiles delta with Square.area
    // inlined, on the word of the class hierarchy (Square the only class
    // loaded that implements Shape) and of delta's type profile (only
    // Square seen).  Then Circle is loaded and passed as well: the class
    // hierarchy's word no longer holds and the JVM deoptimizes the code
    // that relied on it (and recompiles delta with both inlined).
    interface Shape {
        long area(long x, long y);
    }

    static final class Square implements Shape {
        public long area(long x, long y) {
            return (x ^ y) * K + (x >>> 29); // LINE:square
        }
    }

    // Loaded by name (secondShape), not before: no earlier reference to it
    // can make the JVM load it while delta's code is still monomorphic
    static final class Circle implements Shape {
        public long area(long x, long y) {
            return (x ^ y) * K + (x >>> 31); // LINE:circle
        }
    }

    static long delta(Shape s, long[] a) {
        long x = 1;
        for (int i = 0; i < a.length; i++) x = s.area(x, a[i]); // LINE:delta
        return x;
    }

    static Shape secondShape() throws ReflectiveOperationException {
        return (Shape) Class.forName("Shares$Circle").getDeclaredConstructor().newInstance();
    }

    // The blocked threads of JavaShares --blocked: in Object.wait and in
    // Thread.sleep for the whole run (a wakeup, spurious or not, waits
    // again)
    static void waitForever(Object lock) throws InterruptedException {
        synchronized (lock) {
            for (;;) lock.wait(); // LINE:wait
        }
    }

    static void sleepForever() throws InterruptedException {
        for (;;) Thread.sleep(1000000000L); // LINE:sleep
    }

    // JavaShares --churn: a class defined again and again, each time by a
    // loader of its own, from the bytes of Shares$Ephemeral.class (read as
    // a resource; the application's loader itself never loads it), run
    // until the JIT has compiled it, then dropped; a System.gc() now and
    // then unloads the dropped classes and frees their compiled code.
    public static final class Ephemeral implements LongUnaryOperator {
        public Ephemeral() {
        }

        public long applyAsLong(long x) {
            for (int i = 0; i < 10000; i++) x = (x ^ i) * K + (x >>> 29); // LINE:ephemeral
            return x;
        }
    }

    static final class OneClassLoader extends ClassLoader {
        final Class<?> defined;

        OneClassLoader(byte[] bytes) {
            super(Shares.class.getClassLoader());
            defined = defineClass("Shares$Ephemeral", bytes, 0, bytes.length);
        }
    }

    static byte[] ephemeralBytes() throws java.io.IOException {
        try (java.io.InputStream in = Shares.class.getResourceAsStream("Shares$Ephemeral.class")) {
            if (in == null)
                throw new java.io.IOException("no Shares$Ephemeral.class beside Shares.class");
            return in.readAllBytes();
        }
    }

    // One class's life: defined, called until compiled (1000 calls of
    // 10000 iterations: past C1's and C2's thresholds, on-stack
    // replacement's too), dropped
    static long churnOnce(byte[] bytes) throws ReflectiveOperationException {
        Class<?> c = new OneClassLoader(bytes).defined;
        LongUnaryOperator op = (LongUnaryOperator) c.getDeclaredConstructor().newInstance();
        long x = 1;
        for (int i = 0; i < 1000; i++) x = op.applyAsLong(x);
        return x;
    }
}
