#pragma once
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call; these wrappers fix the argument
// type of each kind of option epf uses.

/// curl_easy_setopt with a long argument (CURLOPT_TIMEOUT, CURLOPT_NETRC, ...).
static inline CURLcode epf_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt with a curl_off_t argument (CURLOPT_RESUME_FROM_LARGE, ...).
static inline CURLcode epf_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt with a string argument (CURLOPT_URL, CURLOPT_RANGE, ...); curl copies the string.
static inline CURLcode epf_curl_setopt_str(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt with a pointer argument (CURLOPT_WRITEDATA, CURLOPT_HTTPHEADER, ...).
static inline CURLcode epf_curl_setopt_ptr(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/// The write and header callback type.
typedef size_t (*epf_curl_write_callback)(char *data, size_t size, size_t count, void *context);

/// curl_easy_setopt with a write or header callback (CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION).
static inline CURLcode epf_curl_setopt_write_cb(CURL *handle, CURLoption option, epf_curl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}

/// The progress callback type (CURLOPT_XFERINFOFUNCTION): non-zero aborts the transfer.
typedef int (*epf_curl_xferinfo_callback)(void *context, curl_off_t dltotal, curl_off_t dlnow,
                                          curl_off_t ultotal, curl_off_t ulnow);

/// curl_easy_setopt with CURLOPT_XFERINFOFUNCTION.
static inline CURLcode epf_curl_setopt_xferinfo_cb(CURL *handle, epf_curl_xferinfo_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

/// curl_easy_getinfo for a long result (CURLINFO_RESPONSE_CODE, ...).
static inline CURLcode epf_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// curl_easy_getinfo for a curl_off_t result (CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, ...).
static inline CURLcode epf_curl_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
