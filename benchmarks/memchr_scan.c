// memchr_scan: the C floor for locating EPF records and fields in memory.
//
// Reads a whole file into memory once, then finds every record terminator (0x02 0x0A) and every
// field separator (0x01) with memchr, counting records and fields. Only the in-memory scan is timed;
// it runs --reps times (default 3) and the fastest pass is reported, so a noisy neighbour on a shared
// machine costs us a slower rep, not a wrong figure.
//
// The counting rules match what epf-bench's Swift scan must report:
//   - every record counts, '#' metadata records included;
//   - a record with k separators has k + 1 fields;
//   - bytes after the last terminator, if any, form one more (unterminated) record.
//
// data_records/data_fields count only records not starting with '#', which is what a table reader hands on.
//
// Output, one line, key=value: bytes records fields data_records data_fields seconds gbps (GB = 1e9 bytes).
//
// Build: cc -O2 -o memchr_scan memchr_scan.c
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
    uint64_t records, fields;           // every record
    uint64_t data_records, data_fields; // records not starting with '#'
} Counts;

static void scan(const uint8_t *buf, size_t n, Counts *out) {
    const uint8_t *p = buf;
    const uint8_t *end = buf + n;
    uint64_t records = 0, fields = 0, meta_records = 0, meta_fields = 0;
    while (p < end) {
        // The record ends at the first 0x02 that is followed by 0x0A; a lone 0x02 is data.
        const uint8_t *q = p;
        const uint8_t *term;
        for (;;) {
            term = memchr(q, 0x02, (size_t)(end - q));
            if (term == NULL) { term = end; break; }
            if (term + 1 < end && term[1] == 0x0A) break;
            q = term + 1;
        }
        uint64_t before = fields;
        fields += 1;
        const uint8_t *s = p;
        while ((s = memchr(s, 0x01, (size_t)(term - s))) != NULL) {
            fields += 1;
            s += 1;
        }
        records += 1;
        if (p < term && *p == '#') {
            meta_records += 1;
            meta_fields += fields - before;
        }
        p = (term == end) ? end : term + 2;
    }
    out->records = records;
    out->fields = fields;
    out->data_records = records - meta_records;
    out->data_fields = fields - meta_fields;
}

int main(int argc, char **argv) {
    const char *path = NULL;
    int reps = 3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: memchr_scan FILE [--reps N]\n");
            return 64;
        } else {
            path = argv[i];
        }
    }
    if (path == NULL || reps < 1) {
        fprintf(stderr, "usage: memchr_scan FILE [--reps N]\n");
        return 64;
    }
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "memchr_scan: cannot open %s: %s\n", path, strerror(errno));
        return 66;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        fprintf(stderr, "memchr_scan: fstat %s: %s\n", path, strerror(errno));
        return 66;
    }
    size_t size = (size_t)st.st_size;
    uint8_t *buf = malloc(size ? size : 1);
    if (buf == NULL) {
        fprintf(stderr, "memchr_scan: cannot allocate %zu bytes\n", size);
        return 71;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            fprintf(stderr, "memchr_scan: read %s: %s\n", path, r < 0 ? strerror(errno) : "short read");
            return 66;
        }
        got += (size_t)r;
    }
    close(fd);

    double best = 1e300;
    Counts counts = {0, 0, 0, 0};
    for (int rep = 0; rep < reps; rep++) {
        double t0 = now();
        scan(buf, size, &counts);
        double t = now() - t0;
        if (t < best) best = t;
    }
    printf("bytes=%zu records=%llu fields=%llu data_records=%llu data_fields=%llu seconds=%.6f gbps=%.4f\n", size,
           (unsigned long long)counts.records, (unsigned long long)counts.fields,
           (unsigned long long)counts.data_records, (unsigned long long)counts.data_fields, best,
           best > 0 ? (double)size / best / 1e9 : 0.0);
    free(buf);
    return 0;
}
