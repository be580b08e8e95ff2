SELECT customer_id, SUM(amount) AS total, COUNT(*) AS orders FROM source('orders') WHERE customer_id IS NOT NULL GROUP BY customer_id
