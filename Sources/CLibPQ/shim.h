#pragma once
#include <postgresql/libpq-fe.h>
#include <dlfcn.h>
#include <stddef.h>

// libpq is opened when epf first talks to PostgreSQL, not when epf starts: linking it would load about 24 shared
// libraries (TLS, Kerberos, LDAP, ...) into every epf process, as libcurl would (see CCurl). The declarations come
// from <postgresql/libpq-fe.h> (libpq-dev); the library is that package's libpq.so.5. Each wrapper calls the
// library's function through dlsym and returns a failure value (NULL, CONNECTION_BAD, -1) when the library cannot
// be opened, instead of crashing.

/// The function `name` of libpq.so.5, or NULL when the library cannot be opened or lacks it.
static inline void *epf_pq_symbol(const char *name) {
    static void *library;
    void *handle = __atomic_load_n(&library, __ATOMIC_ACQUIRE);
    if (!handle) {
        handle = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
        if (!handle) return NULL;
        __atomic_store_n(&library, handle, __ATOMIC_RELEASE);
    }
    return dlsym(handle, name);
}

/// Whether libpq.so.5 can be opened.
static inline int epf_pq_available(void) { return epf_pq_symbol("PQconnectdb") != NULL; }

/// PQconnectdb; NULL when libpq is missing.
static inline PGconn *epf_PQconnectdb(const char *conninfo) {
    PGconn *(*fn)(const char *) = (PGconn *(*)(const char *))epf_pq_symbol("PQconnectdb");
    return fn ? fn(conninfo) : NULL;
}

/// PQstatus.
static inline ConnStatusType epf_PQstatus(const PGconn *conn) {
    ConnStatusType (*fn)(const PGconn *) = (ConnStatusType (*)(const PGconn *))epf_pq_symbol("PQstatus");
    return fn ? fn(conn) : CONNECTION_BAD;
}

/// PQerrorMessage.
static inline const char *epf_PQerrorMessage(const PGconn *conn) {
    char *(*fn)(const PGconn *) = (char *(*)(const PGconn *))epf_pq_symbol("PQerrorMessage");
    return fn ? fn(conn) : "libpq.so.5 could not be loaded";
}

/// PQfinish.
static inline void epf_PQfinish(PGconn *conn) {
    void (*fn)(PGconn *) = (void (*)(PGconn *))epf_pq_symbol("PQfinish");
    if (fn) fn(conn);
}

/// PQbackendPID.
static inline int epf_PQbackendPID(const PGconn *conn) {
    int (*fn)(const PGconn *) = (int (*)(const PGconn *))epf_pq_symbol("PQbackendPID");
    return fn ? fn(conn) : 0;
}

/// PQexec; NULL when libpq is missing (or out of memory).
static inline PGresult *epf_PQexec(PGconn *conn, const char *query) {
    PGresult *(*fn)(PGconn *, const char *) = (PGresult *(*)(PGconn *, const char *))epf_pq_symbol("PQexec");
    return fn ? fn(conn, query) : NULL;
}

/// PQexecParams with text parameters and text results.
static inline PGresult *epf_PQexecParams(PGconn *conn, const char *command, int nParams,
                                         const char *const *paramValues) {
    PGresult *(*fn)(PGconn *, const char *, int, const Oid *, const char *const *, const int *, const int *, int) =
        (PGresult *(*)(PGconn *, const char *, int, const Oid *, const char *const *, const int *, const int *,
                       int))epf_pq_symbol("PQexecParams");
    return fn ? fn(conn, command, nParams, NULL, paramValues, NULL, NULL, 0) : NULL;
}

/// PQresultStatus.
static inline ExecStatusType epf_PQresultStatus(const PGresult *res) {
    ExecStatusType (*fn)(const PGresult *) = (ExecStatusType (*)(const PGresult *))epf_pq_symbol("PQresultStatus");
    return fn ? fn(res) : PGRES_FATAL_ERROR;
}

/// PQresultErrorMessage.
static inline const char *epf_PQresultErrorMessage(const PGresult *res) {
    char *(*fn)(const PGresult *) = (char *(*)(const PGresult *))epf_pq_symbol("PQresultErrorMessage");
    return fn ? fn(res) : "";
}

/// PQresultErrorField; NULL when the field is absent.
static inline const char *epf_PQresultErrorField(const PGresult *res, int fieldcode) {
    char *(*fn)(const PGresult *, int) = (char *(*)(const PGresult *, int))epf_pq_symbol("PQresultErrorField");
    return fn ? fn(res, fieldcode) : NULL;
}

/// PQclear.
static inline void epf_PQclear(PGresult *res) {
    void (*fn)(PGresult *) = (void (*)(PGresult *))epf_pq_symbol("PQclear");
    if (fn) fn(res);
}

/// PQntuples.
static inline int epf_PQntuples(const PGresult *res) {
    int (*fn)(const PGresult *) = (int (*)(const PGresult *))epf_pq_symbol("PQntuples");
    return fn ? fn(res) : 0;
}

/// PQnfields.
static inline int epf_PQnfields(const PGresult *res) {
    int (*fn)(const PGresult *) = (int (*)(const PGresult *))epf_pq_symbol("PQnfields");
    return fn ? fn(res) : 0;
}

/// PQgetvalue.
static inline const char *epf_PQgetvalue(const PGresult *res, int row, int column) {
    char *(*fn)(const PGresult *, int, int) = (char *(*)(const PGresult *, int, int))epf_pq_symbol("PQgetvalue");
    return fn ? fn(res, row, column) : "";
}

/// PQgetlength.
static inline int epf_PQgetlength(const PGresult *res, int row, int column) {
    int (*fn)(const PGresult *, int, int) = (int (*)(const PGresult *, int, int))epf_pq_symbol("PQgetlength");
    return fn ? fn(res, row, column) : 0;
}

/// PQgetisnull.
static inline int epf_PQgetisnull(const PGresult *res, int row, int column) {
    int (*fn)(const PGresult *, int, int) = (int (*)(const PGresult *, int, int))epf_pq_symbol("PQgetisnull");
    return fn ? fn(res, row, column) : 1;
}

/// PQputCopyData: 1 queued, -1 error (0 only in non-blocking mode, which epf does not use).
static inline int epf_PQputCopyData(PGconn *conn, const char *buffer, int nbytes) {
    int (*fn)(PGconn *, const char *, int) = (int (*)(PGconn *, const char *, int))epf_pq_symbol("PQputCopyData");
    return fn ? fn(conn, buffer, nbytes) : -1;
}

/// PQputCopyEnd: 1 sent, -1 error; a non-NULL errormsg makes the server fail the COPY.
static inline int epf_PQputCopyEnd(PGconn *conn, const char *errormsg) {
    int (*fn)(PGconn *, const char *) = (int (*)(PGconn *, const char *))epf_pq_symbol("PQputCopyEnd");
    return fn ? fn(conn, errormsg) : -1;
}

/// PQgetResult; NULL when the command's results are all read.
static inline PGresult *epf_PQgetResult(PGconn *conn) {
    PGresult *(*fn)(PGconn *) = (PGresult *(*)(PGconn *))epf_pq_symbol("PQgetResult");
    return fn ? fn(conn) : NULL;
}
