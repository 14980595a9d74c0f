int encore_time_placeholder() { return 0; }
