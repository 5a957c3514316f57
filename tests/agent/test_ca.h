#pragma once
// A certificate authority of a test's own (OpenSSL, in memory): its certificate, and server certificates it signs
// for loopback IP addresses. For TLS servers that tests run on 127.0.0.1 (the Kubernetes API stand-in).
#include <string>

namespace oishell::agent::test {

struct TestCert {
  std::string certificate_pem;
  std::string key_pem;  // PKCS#8
};

class TestCa {
 public:
  // A self-signed CA named `common_name`, valid for a day. ok() false (with error()) when OpenSSL failed.
  explicit TestCa(const std::string& common_name);
  bool ok() const { return !certificate_pem_.empty(); }
  const std::string& error() const { return error_; }
  const std::string& certificate_pem() const { return certificate_pem_; }
  // OpenSSL's subject-name hash, in hex: the CA's file name in a hashed CA directory ("<hash>.0", c_rehash).
  const std::string& subject_hash() const { return subject_hash_; }
  // A server certificate for the IP address `ip` (subjectAltName IP), signed by this CA; empty on failure.
  TestCert server_cert(const std::string& ip) const;

 private:
  std::string common_name_, certificate_pem_, key_pem_, subject_hash_, error_;
};

}  // namespace oishell::agent::test
