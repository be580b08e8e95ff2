SELECT window_start, window_end, COUNT(*) AS orders
FROM TABLE(TUMBLE(TABLE ref('both_shops'), DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end
