/*
 * The "C limit" of the serving benchmarks: the least a server can do to pass serve-vs-nginx.py's cells,
 * so that aasa-server's cost per request can be read against the floor of this machine's kernel and
 * OpenSSL rather than against another full server. One thread, level-triggered epoll, non-blocking
 * sockets, each response prepared once at start (status line, Content-Type, Content-Length and body in
 * one buffer, written with one send), OpenSSL for TLS 1.2/1.3 with a server-side session cache.
 *
 * It does only what the cells need and is not a server anyone should run: the request head is found by
 * its blank line and read for its path, Host and "Connection: close", nothing is validated, no Date, no
 * timeouts, no limits beyond its buffer. GET /.well-known/apple-app-site-association answers the small
 * document, or the large one for Host large.example.com; GET /p/X answers 302 to
 * https://shop.example.com/item/X and GET /s42 302 to https://shop.example.com/item/42, like the link
 * cells; anything else 404.
 *
 * Built by serve-vs-nginx.py: cc -O2 -o limit-server limit-server.c -lssl -lcrypto
 * Usage: limit-server PORT TLS_PORT CERT KEY SMALL_FILE LARGE_FILE   (listens on 127.0.0.1 only)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUFFER 16384
#define MAX_EVENTS 256

struct response { char *bytes; size_t length; };

struct connection {
    int fd;
    SSL *ssl;               /* NULL on the plain port */
    int handshaken;
    char in[BUFFER];
    size_t in_length;
    const char *out;        /* what is left of the response being sent */
    size_t out_left;
    char redirect[512];     /* a 302's bytes, built per request (its Location carries the path) */
    int close_after;
    int wants_write;
};

/* [0] keeps the connection, [1] says it closes (wrk counts an unannounced close as a read error). */
static struct response small_document[2], large_document[2], not_found[2];
static int epoll_fd;
static SSL_CTX *tls_context;

static void fail(const char *what) { perror(what); exit(1); }

static char *read_file(const char *path, size_t *length) {
    FILE *file = fopen(path, "rb");
    if (!file) fail(path);
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    rewind(file);
    char *bytes = malloc(size);
    if (fread(bytes, 1, size, file) != (size_t)size) fail(path);
    fclose(file);
    *length = size;
    return bytes;
}

static struct response prepared(const char *status, const char *type, const char *body, size_t body_length, int closing) {
    struct response response;
    char head[256];
    int head_length = snprintf(head, sizeof head, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s\r\n",
                               status, type, body_length, closing ? "Connection: close\r\n" : "");
    response.length = head_length + body_length;
    response.bytes = malloc(response.length);
    memcpy(response.bytes, head, head_length);
    memcpy(response.bytes + head_length, body, body_length);
    return response;
}

static int listen_on(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) fail("bind");
    if (listen(fd, 4096) < 0) fail("listen");
    return fd;
}

static void watch(struct connection *connection, int writable) {
    if (writable == connection->wants_write) return;
    connection->wants_write = writable;
    struct epoll_event event = {.events = EPOLLIN | (writable ? EPOLLOUT : 0), .data.ptr = connection};
    epoll_ctl(epoll_fd, EPOLL_CTL_MOD, connection->fd, &event);
}

static void close_connection(struct connection *connection) {
    if (connection->ssl) SSL_free(connection->ssl);
    close(connection->fd);
    free(connection);
}

/* Bytes read into `in`: > 0 read, 0 would block, -1 closed or failed. */
static long receive(struct connection *connection) {
    char *into = connection->in + connection->in_length;
    size_t room = BUFFER - connection->in_length;
    if (room == 0) return -1;
    if (!connection->ssl) {
        ssize_t got = recv(connection->fd, into, room, 0);
        if (got > 0) return got;
        return got < 0 && errno == EAGAIN ? 0 : -1;
    }
    int got = SSL_read(connection->ssl, into, (int)room);
    if (got > 0) return got;
    int error = SSL_get_error(connection->ssl, got);
    if (error == SSL_ERROR_WANT_READ) return 0;
    if (error == SSL_ERROR_WANT_WRITE) { watch(connection, 1); return 0; }
    return -1;
}

/* Sends what is left of the response: 1 all sent, 0 would block, -1 failed. */
static int send_rest(struct connection *connection) {
    while (connection->out_left > 0) {
        long sent;
        if (!connection->ssl) {
            sent = send(connection->fd, connection->out, connection->out_left, MSG_NOSIGNAL);
            if (sent < 0) return errno == EAGAIN ? 0 : -1;
        } else {
            sent = SSL_write(connection->ssl, connection->out, (int)connection->out_left);
            if (sent <= 0) {
                int error = SSL_get_error(connection->ssl, (int)sent);
                return error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ ? 0 : -1;
            }
        }
        connection->out += sent;
        connection->out_left -= sent;
    }
    return 1;
}

/* The header line `name` (lowercase, with its colon) within the head, or NULL. */
static const char *header(const char *head, const char *end, const char *name) {
    size_t length = strlen(name);
    for (const char *line = memchr(head, '\n', end - head); line && line + 1 + length < end;
         line = memchr(line + 1, '\n', end - line - 1)) {
        if (strncasecmp(line + 1, name, length) == 0) {
            const char *value = line + 1 + length;
            while (*value == ' ') value++;
            return value;
        }
    }
    return NULL;
}

/* Answers every complete request in `in`; returns -1 when the connection is to be closed. */
static int serve(struct connection *connection) {
    for (;;) {
        if (connection->out_left > 0) {
            int sent = send_rest(connection);
            if (sent < 0) return -1;
            if (sent == 0) { watch(connection, 1); return 0; }
            if (connection->close_after) return -1;
        }
        watch(connection, 0);
        char *end = memmem(connection->in, connection->in_length, "\r\n\r\n", 4);
        if (!end) return 0;
        end += 4;
        const char *path = memchr(connection->in, ' ', end - connection->in);
        if (!path) return -1;
        path++;
        const char *path_end = memchr(path, ' ', end - path);
        if (!path_end) return -1;
        size_t path_length = path_end - path;
        const char *connection_value = header(connection->in, end, "connection:");
        connection->close_after = connection_value && strncasecmp(connection_value, "close", 5) == 0;
        const char *host = header(connection->in, end, "host:");
        static const char document[] = "/.well-known/apple-app-site-association";
        if (path_length == sizeof document - 1 && memcmp(path, document, path_length) == 0) {
            int large = host && strncasecmp(host, "large.example.com", 17) == 0;
            struct response *response = &(large ? large_document : small_document)[connection->close_after];
            connection->out = response->bytes;
            connection->out_left = response->length;
        } else if ((path_length > 3 && memcmp(path, "/p/", 3) == 0) || (path_length == 4 && memcmp(path, "/s42", 4) == 0)) {
            const char *item = path_length == 4 ? "42" : path + 3;
            int item_length = path_length == 4 ? 2 : (int)(path_length - 3);
            const char *query = memchr(item, '?', item_length);
            if (query) item_length = (int)(query - item);
            int length = snprintf(connection->redirect, sizeof connection->redirect,
                                  "HTTP/1.1 302 Found\r\nLocation: https://shop.example.com/item/%.*s\r\nContent-Length: 0\r\n%s\r\n",
                                  item_length, item, connection->close_after ? "Connection: close\r\n" : "");
            if (length <= 0 || length >= (int)sizeof connection->redirect) return -1;
            connection->out = connection->redirect;
            connection->out_left = length;
        } else {
            connection->out = not_found[connection->close_after].bytes;
            connection->out_left = not_found[connection->close_after].length;
        }
        size_t used = end - connection->in;
        memmove(connection->in, end, connection->in_length - used);
        connection->in_length -= used;
    }
}

static void readable(struct connection *connection) {
    if (connection->ssl && !connection->handshaken) {
        int done = SSL_do_handshake(connection->ssl);
        if (done != 1) {
            int error = SSL_get_error(connection->ssl, done);
            if (error == SSL_ERROR_WANT_READ) { watch(connection, 0); return; }
            if (error == SSL_ERROR_WANT_WRITE) { watch(connection, 1); return; }
            close_connection(connection);
            return;
        }
        connection->handshaken = 1;
    }
    if (connection->out_left > 0) {  /* still sending: read once the answer is out */
        if (serve(connection) < 0) { close_connection(connection); return; }
        if (connection->out_left > 0) return;
    }
    for (;;) {
        long got = receive(connection);
        if (got < 0) { close_connection(connection); return; }
        if (got == 0) break;
        connection->in_length += got;
        if (serve(connection) < 0) { close_connection(connection); return; }
        if (connection->out_left > 0) return;
    }
}

static void accept_all(int listener, int tls) {
    for (;;) {
        int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct connection *connection = calloc(1, sizeof *connection);
        connection->fd = fd;
        if (tls) {
            connection->ssl = SSL_new(tls_context);
            SSL_set_fd(connection->ssl, fd);
            SSL_set_accept_state(connection->ssl);
        }
        struct epoll_event event = {.events = EPOLLIN, .data.ptr = connection};
        epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event);
    }
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s PORT TLS_PORT CERT KEY SMALL_FILE LARGE_FILE\n", argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    size_t length;
    char *small = read_file(argv[5], &length);
    size_t large_length;
    char *large = read_file(argv[6], &large_length);
    for (int closing = 0; closing < 2; closing++) {
        small_document[closing] = prepared("200 OK", "application/json", small, length, closing);
        large_document[closing] = prepared("200 OK", "application/json", large, large_length, closing);
        not_found[closing] = prepared("404 Not Found", "text/plain", "not found\n", 10, closing);
    }

    tls_context = SSL_CTX_new(TLS_server_method());
    SSL_CTX_set_min_proto_version(tls_context, TLS1_2_VERSION);
    SSL_CTX_set_session_cache_mode(tls_context, SSL_SESS_CACHE_SERVER);
    if (SSL_CTX_use_certificate_chain_file(tls_context, argv[3]) != 1 ||
        SSL_CTX_use_PrivateKey_file(tls_context, argv[4], SSL_FILETYPE_PEM) != 1) {
        ERR_print_errors_fp(stderr);
        return 1;
    }

    int plain = listen_on(atoi(argv[1])), secure = listen_on(atoi(argv[2]));
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    /* The listeners are told apart from connections by these two addresses. */
    static char plain_tag, secure_tag;
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = &plain_tag};
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, plain, &event);
    event.data.ptr = &secure_tag;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, secure, &event);

    struct epoll_event events[MAX_EVENTS];
    for (;;) {
        int ready = epoll_wait(epoll_fd, events, MAX_EVENTS, -1);
        if (ready < 0 && errno != EINTR) fail("epoll_wait");
        for (int index = 0; index < ready; index++) {
            void *tag = events[index].data.ptr;
            if (tag == &plain_tag) { accept_all(plain, 0); continue; }
            if (tag == &secure_tag) { accept_all(secure, 1); continue; }
            struct connection *connection = tag;
            if (events[index].events & (EPOLLERR | EPOLLHUP)) { close_connection(connection); continue; }
            readable(connection);
        }
    }
}
