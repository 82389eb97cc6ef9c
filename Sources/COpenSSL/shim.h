#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

/* Hide APIs deprecated in OpenSSL 3 from Swift. */
#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED 1
#include <string.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/bio.h>
#include <openssl/rand.h>
#include <openssl/hmac.h>
#include <openssl/core_names.h>

/* Swift cannot import function-like macros or call variadic C functions; each wrapper re-exposes one
 * such OpenSSL API as a real function, named COpenSSL_<original symbol>. */

static inline int COpenSSL_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline long COpenSSL_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
static inline long COpenSSL_SSL_set_mode(SSL *ssl, long mode) { return SSL_set_mode(ssl, mode); }
static inline long COpenSSL_SSL_clear_mode(SSL *ssl, long mode) { return SSL_clear_mode(ssl, mode); }
static inline uint64_t COpenSSL_SSL_OP_NO_COMPRESSION(void) { return SSL_OP_NO_COMPRESSION; }
static inline uint64_t COpenSSL_SSL_OP_NO_RENEGOTIATION(void) { return SSL_OP_NO_RENEGOTIATION; }
static inline uint64_t COpenSSL_SSL_OP_CIPHER_SERVER_PREFERENCE(void) { return SSL_OP_CIPHER_SERVER_PREFERENCE; }
static inline uint64_t COpenSSL_SSL_OP_NO_TICKET(void) { return SSL_OP_NO_TICKET; }
static inline long COpenSSL_SSL_CTX_set1_groups_list(SSL_CTX *ctx, const char *list) {
    return SSL_CTX_set1_groups_list(ctx, list);
}
static inline long COpenSSL_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}
static inline long COpenSSL_SSL_CTX_sess_set_cache_size(SSL_CTX *ctx, long size) {
    return SSL_CTX_sess_set_cache_size(ctx, size);
}
static inline long COpenSSL_SSL_CTX_add_extra_chain_cert(SSL_CTX *ctx, X509 *cert) {
    return SSL_CTX_add_extra_chain_cert(ctx, cert);
}
static inline int COpenSSL_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}
/* EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen. */
static inline EVP_PKEY *COpenSSL_EVP_EC_gen(const char *curve) { return EVP_EC_gen(curve); }
static inline long COpenSSL_BIO_get_mem_data(BIO *bio, char **out) { return BIO_get_mem_data(bio, out); }
static inline void COpenSSL_X509V3_set_ctx_nodb(X509V3_CTX *ctx) { X509V3_set_ctx_nodb(ctx); }

/* SNI: both setters are macros over SSL_CTX_callback_ctrl / SSL_CTX_ctrl. */
typedef int (*COpenSSL_servername_cb)(SSL *ssl, int *alert, void *arg);
static inline long COpenSSL_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *ctx, COpenSSL_servername_cb cb) {
    return SSL_CTX_set_tlsext_servername_callback(ctx, cb);
}
static inline long COpenSSL_SSL_CTX_set_tlsext_servername_arg(SSL_CTX *ctx, void *arg) {
    return SSL_CTX_set_tlsext_servername_arg(ctx, arg);
}
/* EVP_RSA_gen (rsa.h) is a macro over the variadic EVP_PKEY_Q_keygen. */
static inline EVP_PKEY *COpenSSL_EVP_RSA_gen(unsigned int bits) { return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits); }
/* The client hello callback: TLS-ALPN-01 answers are chosen from the offered ALPN before SNI is handled. */
typedef int (*COpenSSL_client_hello_cb)(SSL *ssl, int *alert, void *arg);
static inline void COpenSSL_SSL_CTX_set_client_hello_cb(SSL_CTX *ctx, COpenSSL_client_hello_cb cb, void *arg) {
    SSL_CTX_set_client_hello_cb(ctx, cb, arg);
}
/* ERR_GET_REASON is a macro in some OpenSSL 3 builds and an inline function in others. */
static inline int COpenSSL_ERR_GET_REASON(unsigned long code) { return ERR_GET_REASON(code); }
/* A private key from PEM, without OpenSSL 3.0's search through every decoder of every provider that
 * PEM_read_bio_PrivateKey makes (3.2 million instructions, a tenth of a TLS server's start): the PEM
 * label, or a PKCS#8 key's algorithm, names the key type, and the DER is decoded as that type. Anything
 * else (an encrypted key, a type not listed, a damaged block) takes PEM_read_bio_PrivateKey, so what is
 * accepted and refused does not change. */
static inline EVP_PKEY *COpenSSL_read_private_key(const void *pem, int length) {
    EVP_PKEY *key = NULL;
    BIO *bio = BIO_new_mem_buf(pem, length);
    if (bio == NULL) return NULL;
    char *name = NULL, *header = NULL;
    unsigned char *data = NULL;
    long count = 0;
    /* A block with headers (Proc-Type: 4,ENCRYPTED) holds an encrypted key: the full reader's business. */
    if (PEM_read_bio(bio, &name, &header, &data, &count) == 1 && header != NULL && header[0] == '\0') {
        int type = EVP_PKEY_NONE;
        if (strcmp(name, PEM_STRING_ECPRIVATEKEY) == 0) {
            type = EVP_PKEY_EC;
        } else if (strcmp(name, PEM_STRING_RSA) == 0) {
            type = EVP_PKEY_RSA;
        } else if (strcmp(name, PEM_STRING_PKCS8INF) == 0) {
            const unsigned char *cursor = data;
            PKCS8_PRIV_KEY_INFO *info = d2i_PKCS8_PRIV_KEY_INFO(NULL, &cursor, count);
            const ASN1_OBJECT *algorithm = NULL;
            if (info != NULL && PKCS8_pkey_get0(&algorithm, NULL, NULL, NULL, info) == 1) {
                switch (OBJ_obj2nid(algorithm)) {
                case NID_X9_62_id_ecPublicKey: type = EVP_PKEY_EC; break;
                case NID_rsaEncryption: type = EVP_PKEY_RSA; break;
                case NID_ED25519: type = EVP_PKEY_ED25519; break;
                default: break;
                }
            }
            PKCS8_PRIV_KEY_INFO_free(info);
        }
        if (type != EVP_PKEY_NONE) {
            const unsigned char *cursor = data;
            key = d2i_PrivateKey_ex(type, NULL, &cursor, count, NULL, NULL);
            /* Every byte of the block is the key: trailing bytes are a damaged block, left to the full parser. */
            if (key != NULL && cursor != data + count) {
                EVP_PKEY_free(key);
                key = NULL;
            }
        }
    }
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_free(data);
    BIO_free(bio);
    if (key != NULL) return key;
    ERR_clear_error();
    bio = BIO_new_mem_buf(pem, length);
    if (bio == NULL) return NULL;
    key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    BIO_free(bio);
    return key;
}

#endif
