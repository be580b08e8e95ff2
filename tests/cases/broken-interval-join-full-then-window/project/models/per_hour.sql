SELECT window_start, window_end, COUNT(*) AS orders
FROM TABLE(TUMBLE(TABLE ref('joined'), DESCRIPTOR(ordered_at), INTERVAL '1' HOUR))
GROUP BY window_start, window_end
