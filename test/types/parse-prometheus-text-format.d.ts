// Types for the test-only Prometheus text-format parser (the package ships none).
declare module 'parse-prometheus-text-format' {
  interface Sample {
    value: string;
    labels?: Record<string, string>;
    timestamp_ms?: string;
  }
  interface Family {
    name: string;
    help: string;
    type: string;
    metrics: Sample[];
  }
  export default function parsePrometheusTextFormat(text: string): Family[];
}
