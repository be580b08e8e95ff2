SELECT customer_id, SUM(amount) AS total_spend FROM source('orders') WHERE INTERVAL '1' DAY > INTERVAL '1' HOUR GROUP BY customer_id
