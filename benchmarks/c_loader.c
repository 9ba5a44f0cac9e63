// c_loader: the C baseline for `epf import` -- the fastest plain way to get one EPF file into SQLite.
//
// What it does, and nothing more (no ledger, no validation, no duplicate policy):
//   - maps the file, reads the '#' header records: column names, #primaryKey:, #dbTypes:; skips every
//     other '#' record (legal lines, #exportMode:, #recordsWritten:);
//   - creates the table with INTEGER columns for BIGINT/INTEGER/BOOLEAN/... types and TEXT for all others,
//     no constraints;
//   - PRAGMA journal_mode=OFF, synchronous=OFF, one transaction, one prepared INSERT of every column;
//     an empty field binds NULL, an integer column binds an int64 when the text is a clean integer and the
//     text otherwise; extra fields (a stray 0x01) are dropped, missing ones bind NULL;
//   - after the load, creates the primary-key index (UNIQUE; plain when the data holds duplicate keys).
//
// Output, one line, key=value: rows seconds rows_per_s bytes mb_per_s index (unique|plain|none).
//
// Build: cc -O2 -o c_loader c_loader.c -lsqlite3
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_COLUMNS 256

typedef struct {
    const uint8_t *start;
    size_t length;
} Slice;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die_sqlite(sqlite3 *db, int rc, const char *what) {
    fprintf(stderr, "c_loader: SQLite error %d: %s - while %s\n", rc, db ? sqlite3_errmsg(db) : "?", what);
    exit(70);
}

static void exec_sql(sqlite3 *db, const char *sql) {
    char *message = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &message);
    if (rc != SQLITE_OK) {
        fprintf(stderr, "c_loader: SQLite error %d: %s - while executing %s\n", rc, message ? message : "?", sql);
        exit(70);
    }
}

// Finds the next record in [p, end): sets *record and returns the position after its terminator.
static const uint8_t *next_record(const uint8_t *p, const uint8_t *end, Slice *record) {
    const uint8_t *q = p;
    const uint8_t *term;
    for (;;) {
        term = memchr(q, 0x02, (size_t)(end - q));
        if (term == NULL) { term = end; break; }
        if (term + 1 < end && term[1] == 0x0A) break;
        q = term + 1;
    }
    record->start = p;
    record->length = (size_t)(term - p);
    return term == end ? end : term + 2;
}

// Splits a record on 0x01 into at most max fields; returns the number of fields found (may exceed max).
static int split_fields(Slice record, Slice *fields, int max) {
    const uint8_t *p = record.start;
    const uint8_t *end = record.start + record.length;
    int count = 0;
    for (;;) {
        const uint8_t *sep = memchr(p, 0x01, (size_t)(end - p));
        const uint8_t *stop = sep ? sep : end;
        if (count < max) {
            fields[count].start = p;
            fields[count].length = (size_t)(stop - p);
        }
        count++;
        if (sep == NULL) break;
        p = sep + 1;
    }
    return count;
}

static int has_prefix(Slice s, const char *prefix) {
    size_t n = strlen(prefix);
    return s.length >= n && memcmp(s.start, prefix, n) == 0;
}

static int is_integer_type(Slice type) {
    static const char *names[] = {"BIGINT", "INTEGER", "INT", "BOOLEAN", "TINYINT", "SMALLINT", "MEDIUMINT", NULL};
    for (int i = 0; names[i]; i++) {
        size_t n = strlen(names[i]);
        if (type.length >= n && strncasecmp((const char *)type.start, names[i], n) == 0) {
            if (type.length == n || type.start[n] == '(' || type.start[n] == ' ') return 1;
        }
    }
    return 0;
}

// Parses a clean decimal integer (optional '-'); returns 1 on success.
static int parse_int(Slice s, sqlite3_int64 *out) {
    if (s.length == 0 || s.length > 19) return 0;
    size_t i = 0;
    int negative = 0;
    if (s.start[0] == '-') {
        negative = 1;
        i = 1;
        if (s.length == 1) return 0;
    }
    sqlite3_int64 value = 0;
    for (; i < s.length; i++) {
        uint8_t c = s.start[i];
        if (c < '0' || c > '9') return 0;
        value = value * 10 + (c - '0');
    }
    *out = negative ? -value : value;
    return 1;
}

static void append(char **buf, size_t *len, size_t *cap, const char *text, size_t n) {
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        *buf = realloc(*buf, *cap);
        if (*buf == NULL) { fprintf(stderr, "c_loader: out of memory\n"); exit(71); }
    }
    memcpy(*buf + *len, text, n);
    *len += n;
    (*buf)[*len] = 0;
}

static void append_identifier(char **buf, size_t *len, size_t *cap, const uint8_t *name, size_t n) {
    append(buf, len, cap, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        if (name[i] == '"') append(buf, len, cap, "\"", 1);
        append(buf, len, cap, (const char *)name + i, 1);
    }
    append(buf, len, cap, "\"", 1);
}

int main(int argc, char **argv) {
    const char *path = NULL, *db_path = NULL, *table = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--table") == 0 && i + 1 < argc) {
            table = argv[++i];
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: c_loader FILE DB [--table NAME]\n");
            return 64;
        } else if (path == NULL) {
            path = argv[i];
        } else if (db_path == NULL) {
            db_path = argv[i];
        } else {
            fprintf(stderr, "usage: c_loader FILE DB [--table NAME]\n");
            return 64;
        }
    }
    if (path == NULL || db_path == NULL) {
        fprintf(stderr, "usage: c_loader FILE DB [--table NAME]\n");
        return 64;
    }
    if (table == NULL) {
        const char *slash = strrchr(path, '/');
        table = slash ? slash + 1 : path;
    }

    double t0 = now();
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "c_loader: cannot open %s: %s\n", path, strerror(errno));
        return 66;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size == 0) {
        fprintf(stderr, "c_loader: %s is empty or unreadable\n", path);
        return 66;
    }
    size_t size = (size_t)st.st_size;
    const uint8_t *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        fprintf(stderr, "c_loader: mmap %s: %s\n", path, strerror(errno));
        return 66;
    }
    madvise((void *)map, size, MADV_SEQUENTIAL);
    const uint8_t *end = map + size;

    // Header: the first record holds the column names ('#' + first name).
    Slice record;
    const uint8_t *p = next_record(map, end, &record);
    if (record.length == 0 || record.start[0] != '#') {
        fprintf(stderr, "c_loader: %s: the first record is not a '#' column header\n", path);
        return 65;
    }
    record.start += 1;
    record.length -= 1;
    static Slice names[MAX_COLUMNS], types[MAX_COLUMNS], keys[MAX_COLUMNS];
    int ncols = split_fields(record, names, MAX_COLUMNS);
    if (ncols > MAX_COLUMNS) {
        fprintf(stderr, "c_loader: more than %d columns\n", MAX_COLUMNS);
        return 65;
    }
    int ntypes = 0, nkeys = 0;
    const uint8_t *data_start = p;
    // Read the remaining '#' records up to the first data row.
    while (p < end) {
        const uint8_t *after = next_record(p, end, &record);
        if (record.length == 0 || record.start[0] != '#') break;
        if (has_prefix(record, "#primaryKey:")) {
            Slice rest = {record.start + 12, record.length - 12};
            nkeys = rest.length ? split_fields(rest, keys, MAX_COLUMNS) : 0;
        } else if (has_prefix(record, "#dbTypes:")) {
            Slice rest = {record.start + 9, record.length - 9};
            ntypes = split_fields(rest, types, MAX_COLUMNS);
        }
        p = after;
        data_start = p;
    }
    int integer_column[MAX_COLUMNS];
    for (int c = 0; c < ncols; c++) integer_column[c] = c < ntypes ? is_integer_type(types[c]) : 0;

    sqlite3 *db = NULL;
    unlink(db_path);
    int rc = sqlite3_open(db_path, &db);
    if (rc != SQLITE_OK) die_sqlite(db, rc, "opening the database");
    exec_sql(db, "PRAGMA journal_mode=OFF");
    exec_sql(db, "PRAGMA synchronous=OFF");

    char *sql = NULL;
    size_t len = 0, cap = 0;
    append(&sql, &len, &cap, "CREATE TABLE ", 13);
    append_identifier(&sql, &len, &cap, (const uint8_t *)table, strlen(table));
    append(&sql, &len, &cap, " (", 2);
    for (int c = 0; c < ncols; c++) {
        if (c) append(&sql, &len, &cap, ", ", 2);
        append_identifier(&sql, &len, &cap, names[c].start, names[c].length);
        const char *type = integer_column[c] ? " INTEGER" : " TEXT";
        append(&sql, &len, &cap, type, strlen(type));
    }
    append(&sql, &len, &cap, ")", 1);
    exec_sql(db, sql);

    len = 0;
    append(&sql, &len, &cap, "INSERT INTO ", 12);
    append_identifier(&sql, &len, &cap, (const uint8_t *)table, strlen(table));
    append(&sql, &len, &cap, " VALUES (", 9);
    for (int c = 0; c < ncols; c++) append(&sql, &len, &cap, c ? ",?" : "?", c ? 2 : 1);
    append(&sql, &len, &cap, ")", 1);
    sqlite3_stmt *insert = NULL;
    rc = sqlite3_prepare_v2(db, sql, -1, &insert, NULL);
    if (rc != SQLITE_OK) die_sqlite(db, rc, sql);

    exec_sql(db, "BEGIN");
    static Slice fields[MAX_COLUMNS];
    uint64_t rows = 0;
    p = data_start;
    while (p < end) {
        p = next_record(p, end, &record);
        if (record.length > 0 && record.start[0] == '#') continue;
        if (record.length == 0) continue;
        int n = split_fields(record, fields, MAX_COLUMNS);
        for (int c = 0; c < ncols; c++) {
            if (c >= n || fields[c].length == 0) {
                rc = sqlite3_bind_null(insert, c + 1);
            } else {
                sqlite3_int64 value;
                if (integer_column[c] && parse_int(fields[c], &value)) {
                    rc = sqlite3_bind_int64(insert, c + 1, value);
                } else {
                    rc = sqlite3_bind_text(insert, c + 1, (const char *)fields[c].start, (int)fields[c].length,
                                           SQLITE_STATIC);
                }
            }
            if (rc != SQLITE_OK) die_sqlite(db, rc, "binding a value");
        }
        rc = sqlite3_step(insert);
        if (rc != SQLITE_DONE) die_sqlite(db, rc, "inserting a row");
        rc = sqlite3_reset(insert);
        if (rc != SQLITE_OK) die_sqlite(db, rc, "resetting the insert");
        rows++;
    }
    sqlite3_finalize(insert);
    exec_sql(db, "COMMIT");

    const char *index_kind = "none";
    if (nkeys > 0) {
        for (int unique = 1; unique >= 0; unique--) {
            len = 0;
            const char *head = unique ? "CREATE UNIQUE INDEX " : "CREATE INDEX ";
            append(&sql, &len, &cap, head, strlen(head));
            char index_name[300];
            snprintf(index_name, sizeof index_name, "%s_pk", table);
            append_identifier(&sql, &len, &cap, (const uint8_t *)index_name, strlen(index_name));
            append(&sql, &len, &cap, " ON ", 4);
            append_identifier(&sql, &len, &cap, (const uint8_t *)table, strlen(table));
            append(&sql, &len, &cap, " (", 2);
            for (int k = 0; k < nkeys; k++) {
                if (k) append(&sql, &len, &cap, ", ", 2);
                append_identifier(&sql, &len, &cap, keys[k].start, keys[k].length);
            }
            append(&sql, &len, &cap, ")", 1);
            char *message = NULL;
            rc = sqlite3_exec(db, sql, NULL, NULL, &message);
            if (rc == SQLITE_OK) {
                index_kind = unique ? "unique" : "plain";
                break;
            }
            if (!unique || rc != SQLITE_CONSTRAINT) {
                fprintf(stderr, "c_loader: SQLite error %d: %s - while executing %s\n", rc, message ? message : "?", sql);
                return 70;
            }
            fprintf(stderr, "c_loader: duplicate primary keys; creating a plain index instead\n");
            sqlite3_free(message);
        }
    }
    rc = sqlite3_close(db);
    if (rc != SQLITE_OK) die_sqlite(NULL, rc, "closing the database");
    munmap((void *)map, size);
    close(fd);
    free(sql);
    double seconds = now() - t0;
    printf("rows=%llu seconds=%.4f rows_per_s=%.0f bytes=%zu mb_per_s=%.2f index=%s\n", (unsigned long long)rows,
           seconds, seconds > 0 ? rows / seconds : 0.0, size, seconds > 0 ? size / seconds / 1e6 : 0.0, index_kind);
    return 0;
}
