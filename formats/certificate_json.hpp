#pragma once
// The certificate's file (docs/certificates.md): DIR/certificate.json, version 1, beside the SMT-LIB2 files it
// names. Read by the independent checker and written by `prove --certificate DIR`; the one piece of code they
// share besides model/.
#include "model/certificate.hpp"

#include <filesystem>
#include <string>

namespace pp {

inline constexpr const char* kCertificateFile = "certificate.json";

// The JSON text of a certificate (slots in the native format's syntax: 0F3, 1B2@1, (0F7;7B3)).
std::string certificate_json_text(const Certificate& certificate);
// Writes DIR/certificate.json (DIR must exist).
void write_certificate(const Certificate& certificate, const std::filesystem::path& dir);

// Reads DIR/certificate.json. Throws InputError (file, and the field that is wrong) on anything missing,
// mistyped or of another version; never a partial certificate.
Certificate read_certificate(const std::filesystem::path& dir);
Certificate parse_certificate(const std::string& text, const std::string& file_name);

}  // namespace pp
