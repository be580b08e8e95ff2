SELECT customer_id, SUM(amount) AS total_spend
FROM TABLE(TUMBLE(TABLE source('orders'), DESCRIPTOR(ts), INTERVAL '1' HOUR))
GROUP BY customer_id
