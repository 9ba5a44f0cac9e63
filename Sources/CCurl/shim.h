#pragma once
#include <curl/curl.h>
#include <dlfcn.h>
#include <stddef.h>

// libcurl is opened when the first transfer starts, not when epf starts: linking it would load about 30 shared
// libraries (TLS, HTTP/2, LDAP, Kerberos, ...) into every epf process, which cost each `epf lookup` about 10 ms.
// The declarations come from <curl/curl.h> (libcurl4-openssl-dev); the library is that package's libcurl.so.4.
// Each wrapper below calls the library's function through dlsym and returns an error (CURLE_FAILED_INIT, NULL)
// when the library cannot be opened, instead of crashing.

/// The function `name` of libcurl.so.4, or NULL when the library cannot be opened or lacks it.
static inline void *epf_curl_symbol(const char *name) {
    static void *library;
    void *handle = __atomic_load_n(&library, __ATOMIC_ACQUIRE);
    if (!handle) {
        // dlopen is thread-safe and reference-counted: two threads racing here get the same handle.
        handle = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
        if (!handle) return NULL;
        __atomic_store_n(&library, handle, __ATOMIC_RELEASE);
    }
    return dlsym(handle, name);
}

/// Whether libcurl.so.4 can be opened.
static inline int epf_curl_available(void) {
    return epf_curl_symbol("curl_easy_init") != NULL;
}

/// curl_global_init(3).
static inline CURLcode epf_curl_global_init(long flags) {
    CURLcode (*fn)(long) = (CURLcode (*)(long))epf_curl_symbol("curl_global_init");
    return fn ? fn(flags) : CURLE_FAILED_INIT;
}

/// curl_easy_init(3); NULL when libcurl is missing.
static inline CURL *epf_curl_easy_init(void) {
    CURL *(*fn)(void) = (CURL *(*)(void))epf_curl_symbol("curl_easy_init");
    return fn ? fn() : NULL;
}

/// curl_easy_cleanup(3).
static inline void epf_curl_easy_cleanup(CURL *handle) {
    void (*fn)(CURL *) = (void (*)(CURL *))epf_curl_symbol("curl_easy_cleanup");
    if (fn) fn(handle);
}

/// curl_easy_reset(3).
static inline void epf_curl_easy_reset(CURL *handle) {
    void (*fn)(CURL *) = (void (*)(CURL *))epf_curl_symbol("curl_easy_reset");
    if (fn) fn(handle);
}

/// curl_easy_perform(3).
static inline CURLcode epf_curl_easy_perform(CURL *handle) {
    CURLcode (*fn)(CURL *) = (CURLcode (*)(CURL *))epf_curl_symbol("curl_easy_perform");
    return fn ? fn(handle) : CURLE_FAILED_INIT;
}

/// curl_easy_strerror(3).
static inline const char *epf_curl_easy_strerror(CURLcode code) {
    const char *(*fn)(CURLcode) = (const char *(*)(CURLcode))epf_curl_symbol("curl_easy_strerror");
    return fn ? fn(code) : "libcurl.so.4 could not be loaded";
}

/// curl_easy_setopt(3), variadic in C and so called here with each argument type below.
typedef CURLcode (*epf_curl_setopt_fn)(CURL *, CURLoption, ...);
/// curl_easy_getinfo(3), variadic in C.
typedef CURLcode (*epf_curl_getinfo_fn)(CURL *, CURLINFO, ...);

static inline epf_curl_setopt_fn epf_curl_setopt_function(void) {
    return (epf_curl_setopt_fn)epf_curl_symbol("curl_easy_setopt");
}

static inline epf_curl_getinfo_fn epf_curl_getinfo_function(void) {
    return (epf_curl_getinfo_fn)epf_curl_symbol("curl_easy_getinfo");
}

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call; these wrappers fix the argument
// type of each kind of option epf uses.

/// curl_easy_setopt with a long argument (CURLOPT_TIMEOUT, CURLOPT_NETRC, ...).
static inline CURLcode epf_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    epf_curl_setopt_fn fn = epf_curl_setopt_function();
    return fn ? fn(handle, option, value) : CURLE_FAILED_INIT;
}

/// curl_easy_setopt with a curl_off_t argument (CURLOPT_RESUME_FROM_LARGE, ...).
static inline CURLcode epf_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    epf_curl_setopt_fn fn = epf_curl_setopt_function();
    return fn ? fn(handle, option, value) : CURLE_FAILED_INIT;
}

/// curl_easy_setopt with a string argument (CURLOPT_URL, CURLOPT_RANGE, ...); curl copies the string.
static inline CURLcode epf_curl_setopt_str(CURL *handle, CURLoption option, const char *value) {
    epf_curl_setopt_fn fn = epf_curl_setopt_function();
    return fn ? fn(handle, option, value) : CURLE_FAILED_INIT;
}

/// curl_easy_setopt with a pointer argument (CURLOPT_WRITEDATA, CURLOPT_HTTPHEADER, ...).
static inline CURLcode epf_curl_setopt_ptr(CURL *handle, CURLoption option, void *value) {
    epf_curl_setopt_fn fn = epf_curl_setopt_function();
    return fn ? fn(handle, option, value) : CURLE_FAILED_INIT;
}

/// The write and header callback type.
typedef size_t (*epf_curl_write_callback)(char *data, size_t size, size_t count, void *context);

/// curl_easy_setopt with a write or header callback (CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION).
static inline CURLcode epf_curl_setopt_write_cb(CURL *handle, CURLoption option, epf_curl_write_callback value) {
    epf_curl_setopt_fn fn = epf_curl_setopt_function();
    return fn ? fn(handle, option, value) : CURLE_FAILED_INIT;
}

/// The progress callback type (CURLOPT_XFERINFOFUNCTION): non-zero aborts the transfer.
typedef int (*epf_curl_xferinfo_callback)(void *context, curl_off_t dltotal, curl_off_t dlnow,
                                          curl_off_t ultotal, curl_off_t ulnow);

/// curl_easy_setopt with CURLOPT_XFERINFOFUNCTION.
static inline CURLcode epf_curl_setopt_xferinfo_cb(CURL *handle, epf_curl_xferinfo_callback value) {
    epf_curl_setopt_fn fn = epf_curl_setopt_function();
    return fn ? fn(handle, CURLOPT_XFERINFOFUNCTION, value) : CURLE_FAILED_INIT;
}

/// curl_easy_getinfo for a long result (CURLINFO_RESPONSE_CODE, ...).
static inline CURLcode epf_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    epf_curl_getinfo_fn fn = epf_curl_getinfo_function();
    return fn ? fn(handle, info, value) : CURLE_FAILED_INIT;
}

/// curl_easy_getinfo for a curl_off_t result (CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, ...).
static inline CURLcode epf_curl_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value) {
    epf_curl_getinfo_fn fn = epf_curl_getinfo_function();
    return fn ? fn(handle, info, value) : CURLE_FAILED_INIT;
}
