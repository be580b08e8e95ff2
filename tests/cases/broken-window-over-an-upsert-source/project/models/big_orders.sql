SELECT window_start, window_end, COUNT(*) AS n
FROM TABLE(TUMBLE(TABLE source('orders'), DESCRIPTOR(amount), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end
