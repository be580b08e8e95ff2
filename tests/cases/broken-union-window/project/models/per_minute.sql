SELECT window_start, window_end, COUNT(*) AS orders
FROM TABLE(TUMBLE(TABLE source('web_orders'), DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end
UNION ALL
SELECT window_start, window_end, COUNT(*) AS orders
FROM TABLE(TUMBLE(TABLE source('app_orders'), DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end
