#include "runtime/relay/tls_openssl.h"

#include <openssl/rand.h>

#include <openssl/err.h>
#include <openssl/pem.h>

#include <string>

namespace oishell::relay {

Status openssl_error(std::string_view call) {
  std::string message(call);
  int err = 0;
  bool first = true;
  const char* data = nullptr;
  int flags = 0;
  while (unsigned long code = ERR_get_error_all(nullptr, nullptr, nullptr, &data, &flags)) {
    message += first ? ": " : "; ";
    first = false;
    bool has_text = data != nullptr && (flags & ERR_TXT_STRING) != 0 && *data != '\0';
    if (ERR_GET_LIB(code) == ERR_LIB_USER && has_text) {  // push_openssl_reason's: the text says it all
      message += data;
      continue;
    }
    char text[256];
    ERR_error_string_n(code, text, sizeof text);
    message += text;
    if (has_text) message += std::string(" (") + data + ")";
    if (ERR_SYSTEM_ERROR(code) && err == 0) err = ERR_GET_REASON(code);
  }
  if (first) message += ": failed, with no reason in OpenSSL's error queue";
  return Status::error_with_errno(err, std::move(message));
}

void push_openssl_reason(std::string_view reason) {
  ERR_raise_data(ERR_LIB_USER, ERR_R_OPERATION_FAIL, "%.*s", static_cast<int>(reason.size()), reason.data());
}

Result<std::string> certificate_to_pem(X509* certificate) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), certificate) != 1) return openssl_error("PEM_write_bio_X509");
  char* bytes = nullptr;
  long size = BIO_get_mem_data(bio.get(), &bytes);
  return std::string(bytes, static_cast<size_t>(size));
}

Result<std::string> random_hex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(raw.size())) != 1) {
    return openssl_error("RAND_bytes");
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char byte : raw) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 0xf];
  }
  return hex;
}

}  // namespace oishell::relay
