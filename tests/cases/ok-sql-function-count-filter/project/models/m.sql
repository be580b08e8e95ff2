SELECT customer_id, COUNT(*) FILTER (WHERE amount > 10) AS big_orders FROM source('orders') GROUP BY customer_id
