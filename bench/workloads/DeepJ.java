// A deep Java stack for bench/java_deep.sh: down() recurses DEPTH calls
// into leaf(), a hot loop, again and again for SECONDS.  Nothing to stdout
// but a line at the end.
// Usage: java -cp DIR DeepJ DEPTH SECONDS
public class DeepJ {
    static long leaf(long x) {
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005L + i;
        return x;
    }

    static long down(int d, long x) {
        return d == 0 ? leaf(x) : down(d - 1, x) + 1;
    }

    public static void main(String[] args) {
        int depth = Integer.parseInt(args[0]);
        long end = System.nanoTime() + (long) (Double.parseDouble(args[1]) * 1e9), s = 0;
        while (System.nanoTime() < end)
            s += down(depth, s);
        System.out.println(s == 42 ? "42" : "done");
    }
}
