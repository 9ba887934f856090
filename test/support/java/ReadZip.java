import java.io.BufferedInputStream;
import java.io.FileInputStream;
import java.io.InputStream;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/**
 * Reads a ZIP front to back with java.util.zip.ZipInputStream, the strictest common streaming
 * reader (it refuses a STORED entry with a data descriptor), and prints one line per entry:
 * "<sha256 hex> <size> <name>". Any failure exits non-zero with Java's message.
 * Run as a single-file program: java ReadZip.java archive.zip
 */
public class ReadZip {
  public static void main(String[] args) throws Exception {
    try (InputStream file = new BufferedInputStream(new FileInputStream(args[0]));
         ZipInputStream zip = new ZipInputStream(file, java.nio.charset.StandardCharsets.UTF_8)) {
      byte[] buffer = new byte[64 * 1024];
      for (ZipEntry entry = zip.getNextEntry(); entry != null; entry = zip.getNextEntry()) {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        long size = 0;
        for (int n = zip.read(buffer); n >= 0; n = zip.read(buffer)) {
          sha.update(buffer, 0, n);
          size += n;
        }
        System.out.println(HexFormat.of().formatHex(sha.digest()) + " " + size + " " + entry.getName());
      }
    }
  }
}
