#!/usr/bin/env python3
# Run: python3 examples/weather/upstream.py [PORT]   (default 8765; 0 picks a free port)
#
# A local stand-in for Open-Meteo's geocoding and forecast APIs, for the weather example
# (examples/weather/weather.yaml), since this machine does not reach the Internet. Same paths,
# parameters and answer shapes as https://geocoding-api.open-meteo.com/v1/search and
# https://api.open-meteo.com/v1/forecast, for a handful of cities, with made-up weather.
# Prints "listening on PORT" once it accepts connections. Standard library only.
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

CITIES = [
    {"id": 2950159, "name": "Berlin", "latitude": 52.52437, "longitude": 13.41053, "country": "Germany",
     "country_code": "DE", "timezone": "Europe/Berlin", "population": 3426354},
    {"id": 5391959, "name": "San Francisco", "latitude": 37.77493, "longitude": -122.41942,
     "country": "United States", "country_code": "US", "timezone": "America/Los_Angeles", "population": 864816},
    {"id": 3448439, "name": "São Paulo", "latitude": -23.5475, "longitude": -46.63611, "country": "Brazil",
     "country_code": "BR", "timezone": "America/Sao_Paulo", "population": 10021295},
    {"id": 1850147, "name": "Tokyo", "latitude": 35.6895, "longitude": 139.69171, "country": "Japan",
     "country_code": "JP", "timezone": "Asia/Tokyo", "population": 8336599},
    {"id": 2643743, "name": "London", "latitude": 51.50853, "longitude": -0.12574, "country": "United Kingdom",
     "country_code": "GB", "timezone": "Europe/London", "population": 8961989},
]


def weather_at(latitude, longitude):
    """Deterministic made-up weather for a point: colder towards the poles."""
    temperature = round(30.0 - abs(latitude) * 0.5 + (longitude % 7), 1)
    wind = round(5.0 + abs(longitude) % 20, 1)
    code = [0, 2, 3, 45, 61, 71, 80, 95][int(abs(latitude + longitude)) % 8]
    return temperature, wind, code


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/v1/search":
            name = query.get("name", "").strip().lower()
            count = int(query.get("count", "10"))
            found = [c for c in CITIES if c["name"].lower() == name][:count]
            # Like Open-Meteo: no match is 200 with no `results` at all.
            body = {"generationtime_ms": 0.4}
            if found:
                body["results"] = found
            return self.answer(200, body)
        if url.path == "/v1/forecast":
            try:
                latitude = float(query["latitude"])
                longitude = float(query["longitude"])
            except (KeyError, ValueError):
                return self.answer(400, {"error": True, "reason": "Parameter 'latitude' and 'longitude' are required"})
            temperature, wind, code = weather_at(latitude, longitude)
            return self.answer(200, {
                "latitude": latitude, "longitude": longitude, "timezone": "GMT", "elevation": 38.0,
                "current_units": {"time": "iso8601", "temperature_2m": "°C", "wind_speed_10m": "km/h",
                                  "weather_code": "wmo code"},
                "current": {"time": "2026-11-22T10:00", "interval": 900, "temperature_2m": temperature,
                            "wind_speed_10m": wind, "weather_code": code},
            })
        return self.answer(404, {"error": True, "reason": "Not Found"})

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json; charset=utf-8")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()
