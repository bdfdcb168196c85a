"""A webhook receiver for the quickstart: it checks each delivery's Standard Webhooks signature
with the endpoint's secret (WHSEC) and prints the event. Run: WHSEC=whsec_... python3 webhook_receiver.py"""
import base64, hashlib, hmac, http.server, os
key = base64.b64decode(os.environ["WHSEC"].removeprefix("whsec_"))
class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        signed = f'{self.headers["webhook-id"]}.{self.headers["webhook-timestamp"]}.'.encode() + body
        mac = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        ok = "v1," + mac in self.headers["webhook-signature"].split()
        print("signature", "ok" if ok else "BAD", body.decode(), flush=True)
        self.send_response(204 if ok else 400)
        self.end_headers()
    def log_message(self, *args): pass
http.server.HTTPServer(("127.0.0.1", 9000), Hook).serve_forever()
