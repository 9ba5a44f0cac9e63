// epf_tools: input preparation for the benchmarks. Nothing here is measured.
//
//   epf_tools synth TABLE OUT (--rows N | --bytes B) [--seed S] [--date YYYYMMDD] [--storefronts K]
//       Writes a deterministic synthetic EPF file for TABLE (application, application_detail,
//       application_price) with the full header: column names, #primaryKey:, #dbTypes:, #exportMode:FULL,
//       legal lines, and the #recordsWritten: footer. Values hold raw LF and CR LF, 2-4 byte UTF-8 and
//       empty (NULL) fields, like the real feed. Used only when `epf generate` is not available.
//   epf_tools incremental IN OUT --every K --export-date MS
//       Writes an INCREMENTAL copy of a FULL file: every K-th data row, export_date set to MS and
//       retail_price (when the table has one) changed, #exportMode:INCREMENTAL, #recordsWritten fixed.
//   epf_tools ascii IN OUT
//       Converts the data rows of an EPF file to the sqlite3 shell's `.mode ascii` separators (0x1F between
//       fields, 0x1E after each row), dropping every '#' record. Stray 0x1E/0x1F bytes in values become
//       spaces (reported on stderr).
//
// Build: cc -O2 -o epf_tools epf_tools.c
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char FS = 0x01;
static const char RS[2] = {0x02, 0x0A};

// ---------------------------------------------------------------- output

typedef struct {
    FILE *file;
    uint64_t bytes;
} Out;

static void put(Out *o, const char *s, size_t n) {
    if (n && fwrite(s, 1, n, o->file) != n) {
        fprintf(stderr, "epf_tools: write failed: %s\n", strerror(errno));
        exit(74);
    }
    o->bytes += n;
}
static void puts_(Out *o, const char *s) { put(o, s, strlen(s)); }
static void putf(Out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(Out *o, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    put(o, buf, (size_t)(n < (int)sizeof buf ? n : (int)sizeof buf - 1));
}
static void sep(Out *o) { put(o, &FS, 1); }
static void end_record(Out *o) { put(o, RS, 2); }

static Out open_out(const char *path) {
    Out o = {fopen(path, "wb"), 0};
    if (o.file == NULL) {
        fprintf(stderr, "epf_tools: cannot create %s: %s\n", path, strerror(errno));
        exit(73);
    }
    setvbuf(o.file, NULL, _IOFBF, 1 << 20);
    return o;
}

static void close_out(Out *o) {
    if (fclose(o->file) != 0) {
        fprintf(stderr, "epf_tools: close failed: %s\n", strerror(errno));
        exit(74);
    }
}

// ---------------------------------------------------------------- randomness and words

static uint64_t rng_state;
static uint64_t rnd(void) {  // splitmix64
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static uint64_t below(uint64_t n) { return rnd() % n; }

static const char *WORDS[] = {
    "photo", "editor", "puzzle", "game", "music", "player", "weather", "radar", "fitness", "tracker",
    "budget", "planner", "notes", "recipe", "travel", "guide", "camera", "filter", "chess", "solitaire",
    "language", "learn", "kids", "story", "book", "reader", "news", "daily", "sleep", "sounds",
    "the", "and", "with", "your", "for", "all", "new", "best", "free", "pro",
    "easy", "fast", "simple", "smart", "world", "city", "adventure", "quest", "magic", "dragon",
    "café", "naïve", "Straße", "élan", "日本語", "ゲーム", "中文", "한국어", "🎮", "🚀", "✨", "📷", "𝄞",
    "features", "include", "support", "update", "version", "improved", "performance", "bug", "fixes", "design",
};
#define NWORDS (sizeof WORDS / sizeof WORDS[0])

static void words(Out *o, int n) {
    for (int i = 0; i < n; i++) {
        if (i) put(o, " ", 1);
        puts_(o, WORDS[below(NWORDS)]);
    }
}

static void title_words(Out *o, int n) {
    for (int i = 0; i < n; i++) {
        if (i) put(o, " ", 1);
        const char *w = WORDS[below(50)];
        char first = w[0];
        if (first >= 'a' && first <= 'z') first = (char)(first - 32);
        put(o, &first, 1);
        puts_(o, w + 1);
    }
}

// Paragraphs separated by LF, LF LF or CR LF, as in real descriptions and release notes.
static void long_text(Out *o, int min_paragraphs, int max_paragraphs) {
    int paragraphs = min_paragraphs + (int)below((uint64_t)(max_paragraphs - min_paragraphs + 1));
    for (int i = 0; i < paragraphs; i++) {
        if (i) {
            uint64_t k = below(10);
            puts_(o, k < 6 ? "\n\n" : k < 9 ? "\n" : "\r\n");
        }
        if (below(4) == 0) puts_(o, "• ");
        words(o, 8 + (int)below(32));
        put(o, ".", 1);
    }
}

static void hex(Out *o, int n) {
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < n; i++) put(o, &digits[below(16)], 1);
}

static void image_url(Out *o, const char *size) {
    putf(o, "https://is%d-ssl.mzstatic.com/image/thumb/Purple%d/v4/", 1 + (int)below(5), 100 + (int)below(30));
    hex(o, 2); put(o, "/", 1); hex(o, 2); put(o, "/", 1); hex(o, 2); put(o, "/", 1);
    hex(o, 8); put(o, "-", 1); hex(o, 4); put(o, "-", 1); hex(o, 4); put(o, "-", 1); hex(o, 4); put(o, "-", 1);
    hex(o, 12);
    putf(o, "/source/%s.jpg", size);
}

// ---------------------------------------------------------------- tables

typedef struct {
    const char *name;
    const char *columns;     // names separated by ','
    const char *primary_key; // names separated by ','
    const char *types;       // separated by ';'
} Table;

static const Table TABLES[] = {
    {"application",
     "export_date,application_id,title,recommended_age,artist_name,seller_name,company_url,support_url,view_url,"
     "artwork_url_large,artwork_url_small,itunes_release_date,copyright,description,version,itunes_version,"
     "download_size",
     "application_id",
     "BIGINT;INTEGER;VARCHAR(1000);VARCHAR(20);VARCHAR(1000);VARCHAR(1000);VARCHAR(1000);VARCHAR(1000);"
     "VARCHAR(1000);VARCHAR(1000);VARCHAR(1000);DATETIME;VARCHAR(4000);LONGTEXT;VARCHAR(100);VARCHAR(100);BIGINT"},
    {"application_detail",
     "export_date,application_id,language_code,title,description,release_notes,company_url,support_url,"
     "screenshot_url_1,screenshot_url_2,screenshot_url_3,screenshot_url_4,"
     "screenshot_width_height_1,screenshot_width_height_2,screenshot_width_height_3,screenshot_width_height_4,"
     "ipad_screenshot_url_1,ipad_screenshot_url_2,ipad_screenshot_url_3,ipad_screenshot_url_4,"
     "ipad_screenshot_width_height_1,ipad_screenshot_width_height_2,ipad_screenshot_width_height_3,"
     "ipad_screenshot_width_height_4",
     "application_id,language_code",
     "BIGINT;INTEGER;VARCHAR(20);VARCHAR(1000);LONGTEXT;LONGTEXT;VARCHAR(1000);VARCHAR(1000);"
     "VARCHAR(1000);VARCHAR(1000);VARCHAR(1000);VARCHAR(1000);VARCHAR(20);VARCHAR(20);VARCHAR(20);VARCHAR(20);"
     "VARCHAR(1000);VARCHAR(1000);VARCHAR(1000);VARCHAR(1000);VARCHAR(20);VARCHAR(20);VARCHAR(20);VARCHAR(20)"},
    {"application_price",
     "export_date,application_id,retail_price,currency_code,storefront_id",
     "application_id,storefront_id",
     "BIGINT;INTEGER;DECIMAL(9,3);VARCHAR(20);INTEGER"},
};

static void list(Out *o, const char *items, char separator) {
    for (const char *p = items; *p; p++) {
        if (*p == separator) sep(o);
        else put(o, p, 1);
    }
}

static void header(Out *o, const Table *t, const char *mode) {
    put(o, "#", 1);
    list(o, t->columns, ',');
    end_record(o);
    puts_(o, "#primaryKey:");
    list(o, t->primary_key, ',');
    end_record(o);
    puts_(o, "#dbTypes:");
    list(o, t->types, ';');
    end_record(o);
    putf(o, "#exportMode:%s", mode);
    end_record(o);
    for (int i = 0; i < 30; i++) {
        puts_(o, "##legal: ");
        if (i % 7 != 3) putf(o, "Synthetic legal line %d for benchmarks; not Apple data.", i + 1);
        end_record(o);
    }
}

static const int STOREFRONTS[] = {143441, 143444, 143443, 143442, 143462, 143465, 143466, 143455, 143460, 143450,
                                  143454, 143445, 143446, 143447, 143448, 143449, 143451, 143452, 143453, 143456,
                                  143457, 143458, 143459, 143461, 143463, 143464, 143467, 143468, 143469, 143470};
static const char *CURRENCIES[] = {"USD", "GBP", "EUR", "CAD", "JPY", "CNY", "KRW", "AUD", "CHF", "EUR",
                                   "EUR", "EUR", "EUR", "EUR", "EUR", "EUR", "EUR", "EUR", "EUR", "EUR",
                                   "INR", "MXN", "BRL", "NZD", "HKD", "SGD", "ILS", "SEK", "NOK", "DKK"};
#define NSTOREFRONTS ((int)(sizeof STOREFRONTS / sizeof STOREFRONTS[0]))
static const char *PRICES[] = {"0.000", "0.99", "1.99", "2.99", "4.99", "9.99", "0.000", "0.000", "19.99", "120"};
static const char *LANGUAGES[] = {"EN", "FR", "DE", "JA", "ZH", "ES", "IT", "KO"};

static int64_t app_id(uint64_t k) { return 284882215 + (int64_t)k * 13; }

static void application_row(Out *o, int64_t export_date, uint64_t k) {
    int64_t id = app_id(k);
    putf(o, "%" PRId64, export_date); sep(o);
    putf(o, "%" PRId64, id); sep(o);
    title_words(o, 1 + (int)below(4)); sep(o);
    static const char *ages[] = {"4+", "9+", "12+", "17+"};
    puts_(o, ages[below(4)]); sep(o);
    title_words(o, 2); sep(o);
    title_words(o, 2); puts_(o, below(2) ? " Inc." : " LLC"); sep(o);
    if (below(10)) { puts_(o, "https://www."); puts_(o, WORDS[below(30)]); putf(o, "%d.com/", (int)below(1000)); }
    sep(o);
    if (below(5)) { puts_(o, "https://support."); puts_(o, WORDS[below(30)]); putf(o, "%d.com/", (int)below(1000)); }
    sep(o);
    putf(o, "https://apps.apple.com/us/app/%s-%s/id%" PRId64 "?uo=5", WORDS[below(30)], WORDS[below(30)], id); sep(o);
    image_url(o, "512x512bb"); sep(o);
    image_url(o, "100x100bb"); sep(o);
    putf(o, "%04d %02d %02d", 2008 + (int)below(17), 1 + (int)below(12), 1 + (int)below(28)); sep(o);
    putf(o, "© %d ", 2008 + (int)below(17)); title_words(o, 2); sep(o);
    long_text(o, 2, 14); sep(o);
    putf(o, "%d.%d.%d", (int)below(10), (int)below(20), (int)below(10)); sep(o);
    putf(o, "%d", (int)below(100)); sep(o);
    putf(o, "%" PRIu64, 1000000 + below(900000000));
    end_record(o);
}

static void detail_row(Out *o, int64_t export_date, uint64_t k, int language) {
    putf(o, "%" PRId64, export_date); sep(o);
    putf(o, "%" PRId64, app_id(k)); sep(o);
    puts_(o, LANGUAGES[language]); sep(o);
    title_words(o, 1 + (int)below(4)); sep(o);
    long_text(o, 2, 12); sep(o);
    if (below(4)) long_text(o, 1, 4);
    sep(o);
    puts_(o, "https://www."); puts_(o, WORDS[below(30)]); putf(o, "%d.com/", (int)below(1000)); sep(o);
    if (below(5)) { puts_(o, "https://support."); puts_(o, WORDS[below(30)]); putf(o, "%d.com/", (int)below(1000)); }
    sep(o);
    int shots = (int)below(5);
    for (int i = 0; i < 4; i++) { if (i < shots) image_url(o, "392x696bb"); sep(o); }
    for (int i = 0; i < 4; i++) { if (i < shots) puts_(o, "392x696"); sep(o); }
    int ipad = (int)below(5);
    for (int i = 0; i < 4; i++) { if (i < ipad) image_url(o, "576x768bb"); sep(o); }
    for (int i = 0; i < 4; i++) {
        if (i < ipad) puts_(o, "576x768");
        if (i < 3) sep(o);
    }
    end_record(o);
}

static void price_row(Out *o, int64_t export_date, uint64_t k, int storefront) {
    putf(o, "%" PRId64, export_date); sep(o);
    putf(o, "%" PRId64, app_id(k)); sep(o);
    puts_(o, PRICES[below(10)]); sep(o);
    puts_(o, CURRENCIES[storefront]); sep(o);
    putf(o, "%d", STOREFRONTS[storefront]);
    end_record(o);
}

static int64_t export_date_ms(const char *yyyymmdd) {
    struct tm tm = {0};
    if (strlen(yyyymmdd) != 8 || sscanf(yyyymmdd, "%4d%2d%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday) != 3) {
        fprintf(stderr, "epf_tools: --date must be YYYYMMDD, got %s\n", yyyymmdd);
        exit(64);
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_hour = 10;
    return (int64_t)timegm(&tm) * 1000 + 7;
}

static int synth(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: epf_tools synth TABLE OUT (--rows N | --bytes B) [--seed S] [--date YYYYMMDD] "
                        "[--storefronts K]\n");
        return 64;
    }
    const char *table_name = argv[0], *out_path = argv[1];
    uint64_t rows = 0, bytes = 0, seed = 1;
    int storefronts = 20;
    const char *date = "20250105";
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--rows") == 0) rows = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--bytes") == 0) bytes = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0) seed = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--date") == 0) date = argv[i + 1];
        else if (strcmp(argv[i], "--storefronts") == 0) storefronts = atoi(argv[i + 1]);
        else { fprintf(stderr, "epf_tools synth: unknown option %s\n", argv[i]); return 64; }
    }
    if ((rows == 0) == (bytes == 0)) { fprintf(stderr, "epf_tools synth: give exactly one of --rows, --bytes\n"); return 64; }
    if (storefronts < 1 || storefronts > NSTOREFRONTS) {
        fprintf(stderr, "epf_tools synth: --storefronts must be 1...%d\n", NSTOREFRONTS);
        return 64;
    }
    const Table *table = NULL;
    for (size_t i = 0; i < sizeof TABLES / sizeof TABLES[0]; i++)
        if (strcmp(TABLES[i].name, table_name) == 0) table = &TABLES[i];
    if (table == NULL) { fprintf(stderr, "epf_tools synth: unknown table %s\n", table_name); return 64; }
    rng_state = seed * 0x2545F4914F6CDD1DULL + (uint64_t)(table - TABLES);
    int64_t export_date = export_date_ms(date);

    Out o = open_out(out_path);
    header(&o, table, "FULL");
    uint64_t written = 0, k = 0;
    int index = (int)(table - TABLES);
    while (rows ? written < rows : o.bytes < bytes) {
        if (index == 0) {
            application_row(&o, export_date, k);
            written++;
        } else if (index == 1) {
            int languages = 1 + (int)(k % 3);
            for (int l = 0; l < languages && (rows ? written < rows : 1); l++) {
                detail_row(&o, export_date, k, (int)((k + (uint64_t)l) % 8));
                written++;
            }
        } else {
            for (int s = 0; s < storefronts && (rows ? written < rows : 1); s++) {
                price_row(&o, export_date, k, s);
                written++;
            }
        }
        k++;
    }
    putf(&o, "#recordsWritten:%" PRIu64, written);
    end_record(&o);
    close_out(&o);
    printf("rows=%" PRIu64 " apps=%" PRIu64 " bytes=%" PRIu64 "\n", written, k, o.bytes);
    return 0;
}

// ---------------------------------------------------------------- reading existing files

typedef struct {
    const uint8_t *start;
    size_t length;
} Slice;

static const uint8_t *map_file(const char *path, size_t *size) {
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "epf_tools: cannot open %s: %s\n", path, strerror(errno));
        exit(66);
    }
    *size = (size_t)st.st_size;
    if (*size == 0) { fprintf(stderr, "epf_tools: %s is empty\n", path); exit(66); }
    const uint8_t *map = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) { fprintf(stderr, "epf_tools: mmap %s: %s\n", path, strerror(errno)); exit(66); }
    madvise((void *)map, *size, MADV_SEQUENTIAL);
    close(fd);
    return map;
}

static const uint8_t *next_record(const uint8_t *p, const uint8_t *end, Slice *record) {
    const uint8_t *q = p, *term;
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

static int starts(Slice s, const char *prefix) {
    size_t n = strlen(prefix);
    return s.length >= n && memcmp(s.start, prefix, n) == 0;
}

static int incremental(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: epf_tools incremental IN OUT --every K --export-date MS\n");
        return 64;
    }
    uint64_t every = 20;
    long long export_date = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--every") == 0) every = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--export-date") == 0) export_date = strtoll(argv[i + 1], NULL, 10);
        else { fprintf(stderr, "epf_tools incremental: unknown option %s\n", argv[i]); return 64; }
    }
    if (every < 1 || export_date <= 0) { fprintf(stderr, "epf_tools incremental: need --every >= 1 and --export-date\n"); return 64; }
    size_t size;
    const uint8_t *map = map_file(argv[0], &size);
    const uint8_t *end = map + size, *p = map;
    Out o = open_out(argv[1]);
    Slice record;
    int price_column = -1;
    uint64_t data_index = 0, written = 0;
    int first = 1;
    while (p < end) {
        p = next_record(p, end, &record);
        if (record.length > 0 && record.start[0] == '#') {
            if (first) {
                // Find retail_price among the column names.
                int column = 0;
                const uint8_t *f = record.start + 1, *stop = record.start + record.length;
                while (f <= stop) {
                    const uint8_t *s = memchr(f, 0x01, (size_t)(stop - f));
                    const uint8_t *e = s ? s : stop;
                    if ((size_t)(e - f) == 12 && memcmp(f, "retail_price", 12) == 0) price_column = column;
                    column++;
                    if (!s) break;
                    f = s + 1;
                }
                put(&o, (const char *)record.start, record.length);
                end_record(&o);
            } else if (starts(record, "#exportMode:")) {
                puts_(&o, "#exportMode:INCREMENTAL");
                end_record(&o);
            } else if (!starts(record, "#recordsWritten:")) {
                put(&o, (const char *)record.start, record.length);
                end_record(&o);
            }
            first = 0;
            continue;
        }
        first = 0;
        if (record.length == 0) continue;
        if (data_index++ % every != 0) continue;
        // export_date is the first field; replace it, copy the rest, change retail_price.
        const uint8_t *f = memchr(record.start, 0x01, record.length);
        putf(&o, "%lld", export_date);
        if (f == NULL) { end_record(&o); written++; continue; }
        const uint8_t *stop = record.start + record.length;
        int column = 1;
        f += 1;
        for (;;) {
            sep(&o);
            const uint8_t *s = memchr(f, 0x01, (size_t)(stop - f));
            const uint8_t *e = s ? s : stop;
            if (column == price_column) {
                puts_(&o, ((size_t)(e - f) == 4 && memcmp(f, "0.99", 4) == 0) ? "1.99" : "0.99");
            } else {
                put(&o, (const char *)f, (size_t)(e - f));
            }
            column++;
            if (!s) break;
            f = s + 1;
        }
        end_record(&o);
        written++;
    }
    putf(&o, "#recordsWritten:%" PRIu64, written);
    end_record(&o);
    close_out(&o);
    printf("rows=%" PRIu64 " bytes=%" PRIu64 "\n", written, o.bytes);
    return 0;
}

static int ascii(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: epf_tools ascii IN OUT\n"); return 64; }
    size_t size;
    const uint8_t *map = map_file(argv[0], &size);
    const uint8_t *end = map + size, *p = map;
    Out o = open_out(argv[1]);
    Slice record;
    uint64_t rows = 0, replaced = 0;
    char *line = NULL;
    size_t cap = 0;
    while (p < end) {
        p = next_record(p, end, &record);
        if (record.length == 0 || record.start[0] == '#') continue;
        if (record.length + 1 > cap) {
            cap = (record.length + 1) * 2;
            line = realloc(line, cap);
            if (line == NULL) { fprintf(stderr, "epf_tools: out of memory\n"); return 71; }
        }
        for (size_t i = 0; i < record.length; i++) {
            uint8_t c = record.start[i];
            if (c == 0x1E || c == 0x1F) { c = ' '; replaced++; }
            else if (c == 0x01) c = 0x1F;
            line[i] = (char)c;
        }
        line[record.length] = 0x1E;
        put(&o, line, record.length + 1);
        rows++;
    }
    close_out(&o);
    free(line);
    if (replaced) fprintf(stderr, "epf_tools ascii: replaced %" PRIu64 " stray 0x1E/0x1F bytes with spaces\n", replaced);
    printf("rows=%" PRIu64 " bytes=%" PRIu64 "\n", rows, o.bytes);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "synth") == 0) return synth(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "incremental") == 0) return incremental(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "ascii") == 0) return ascii(argc - 2, argv + 2);
    fprintf(stderr, "usage: epf_tools synth|incremental|ascii ...\n");
    return 64;
}
