# hack/cluster/pki.sh: the cluster CA, every component's certificate, the service-account keys and the kubeconfigs
# (templates/kubeconfig.tmpl). Sourced by hack/cluster.sh.

# gen_cert NAME CN ORG EKU [SAN]: a P-256 key and a certificate signed by the cluster CA.
gen_cert() {
  local name="$1" cn="$2" org="$3" eku="$4" san="${5:-}" subj ext
  [ -s "$PKI/$name.crt" ] && [ -s "$PKI/$name.key" ] && return 0
  subj="/CN=$cn"
  [ -n "$org" ] && subj="/O=$org$subj"
  ext="$PKI/$name.ext"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [ -n "$san" ] && echo "subjectAltName=$san"
  } > "$ext"
  openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/$name.key" 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr" 2>/dev/null
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$ext"
}

# write_kubeconfig FILE CERTNAME: a kubeconfig for the API server at the node IP with a client certificate.

# write_kubeconfig FILE CERTNAME: a kubeconfig for the API server at the node IP with a client certificate.
write_kubeconfig() {
  local file="$1" CLIENT_NAME="$2" CA_DATA CLIENT_CERT_DATA CLIENT_KEY_DATA
  CA_DATA="$(base64 -w0 < "$PKI/ca.crt")"
  CLIENT_CERT_DATA="$(base64 -w0 < "$PKI/$CLIENT_NAME.crt")"
  CLIENT_KEY_DATA="$(base64 -w0 < "$PKI/$CLIENT_NAME.key")"
  render "$TEMPLATES/kubeconfig.tmpl" NODE_IP API_PORT CA_DATA CLIENT_NAME CLIENT_CERT_DATA CLIENT_KEY_DATA > "$file"
  chmod 600 "$file"
}

ensure_pki() {
  mkdir -p "$PKI" "$CONF"
  chmod 700 "$PKI"
  if [ ! -s "$PKI/ca.crt" ]; then
    log "generating the cluster CA, certificates and service-account keys"
    openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/ca.key" 2>/dev/null
    openssl req -x509 -new -key "$PKI/ca.key" -subj "/CN=evalrun-local-ca" -days 3650 -sha256 \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
      -out "$PKI/ca.crt" 2>/dev/null
  fi
  gen_cert apiserver kube-apiserver "" serverAuth \
    "IP:$NODE_IP,IP:$SVC_API_IP,IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  gen_cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters clientAuth
  gen_cert admin evalrun-admin system:masters clientAuth
  gen_cert controller-manager system:kube-controller-manager "" clientAuth
  gen_cert scheduler system:kube-scheduler "" clientAuth
  gen_cert kube-proxy system:kube-proxy "" clientAuth
  gen_cert kubelet "system:node:$NODE_NAME" system:nodes clientAuth
  gen_cert kubelet-serving "system:node:$NODE_NAME" system:nodes serverAuth "IP:$NODE_IP,DNS:$NODE_NAME"
  if [ ! -s "$PKI/sa.key" ]; then
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$PKI/sa.key" 2>/dev/null
    openssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  fi
  for c in admin controller-manager scheduler kube-proxy kubelet; do write_kubeconfig "$CONF/$c.kubeconfig" "$c"; done
  mkdir -p "$OUT_DIR"
  cp "$CONF/admin.kubeconfig" "$KUBECONFIG_OUT"
  chmod 600 "$KUBECONFIG_OUT"
}

